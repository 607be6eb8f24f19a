"""docs/gpu.md's bench commands parse with the bench's own arguments and knobs, and its hours figure is computed
from the per-image times docs/algorithms.md states."""
import argparse
import re
import shlex
from pathlib import Path

from specviz.analysis import bench, bench_cli
from specviz.engine.config import RunConfig

DOCS = Path(__file__).resolve().parents[2] / "docs"


def bench_commands(text: str) -> list[list[str]]:
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    cmds = []
    for b in blocks:
        for cmd in b.replace("\\\n", " ").splitlines():
            if "specviz bench" in cmd:
                words = shlex.split(cmd.replace("$HOME", "/home/user"))
                cmds.append(words[words.index("bench") + 1:])
    return cmds


def test_every_bench_command_in_gpu_md_parses():
    cmds = bench_commands((DOCS / "gpu.md").read_text())
    assert len(cmds) == 3
    parser = argparse.ArgumentParser()
    bench_cli.add_arguments(parser)
    for words in cmds:
        args = parser.parse_args(words)
        base = {k: bench.cast_knob(k, v) for k, v in (s.split("=", 1) for s in args.set)} | {"model": args.model}
        for m in args.methods:
            name, over = bench.parse_spec(m)
            RunConfig(**(base | over | {"method": name}))
        assert args.table == "paper" and args.prompts == "coco" and args.limit == 1000 and args.out


def test_hours_per_thousand_prompts_follow_from_the_stated_per_image_times():
    algo = (DOCS / "algorithms.md").read_text()
    ar, csd = map(float, re.search(r"\| CSD \| Janus-Pro-7B .*?4\.33x \(([\d.]+) s -> ([\d.]+) s\)", algo).groups())
    gpu = (DOCS / "gpu.md").read_text()
    hours = float(re.search(r"\*\*([\d.]+) GPU-hours per 1,000 prompts\*\*", gpu).group(1))
    assert hours == round(1000 * (ar + csd) / 3600, 2)
    assert f"(AR {ar} s, CSD {csd:.2f} s" in gpu and f"{1000 * (ar + csd):,.0f} s" in gpu
