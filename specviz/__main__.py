"""Command line: python -m specviz {generate,bench,sweep,atlas,train,convert} ... (docs/design.md §5)."""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import fields
from pathlib import Path

import torch
from tqdm import tqdm

from specviz.analysis import atlas, atlas_paired, atlas_run, bench, bench_cli, front, sweep
from specviz.engine.config import RunConfig
from specviz.engine.drafters import drafter_factory
from specviz.engine.registry import METHODS, all_knobs
from specviz.models import load_model, use_compile
from specviz.models.runner import run
from specviz.render import atlas_fig, pareto
from specviz.scenes import train


class _Parser(argparse.ArgumentParser):
    def error(self, message):                      # one clear line, exit code 2, no usage dump
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    """One flag per registered knob (docs/design.md: flags and UI controls map one to one onto config fields)."""
    for k in all_knobs():
        p.add_argument(k.flag, type=k.kind, default=k.default, dest=k.name, help=k.help or None,
                       choices=list(METHODS) if k.name == "method" else (k.choices or None))


def _generate(args) -> int:
    cfg = RunConfig(**{f.name: getattr(args, f.name) for f in fields(RunConfig)})
    use_compile(args.compile)                       # refuses in one line where torch.compile cannot compile
    draft = load_model(cfg.draft_model, args.device) if cfg.draft_model else None     # a missing one fails first
    model = load_model(cfg.model, args.device)
    if args.grid:
        want = [int(v) for v in args.grid.lower().split("x")]
        if want != list(model.grid):
            raise ValueError(f"--grid {args.grid} does not match the model's {model.grid[0]}x{model.grid[1]} grid; "
                             "drop --grid or pass the model's grid")
    trace = run(cfg, device=args.device, draft_model=draft, model=model)
    if args.out:
        model.decode_image(trace.tokens).save(args.out)
    if args.trace:
        trace.save(args.trace)
    print(json.dumps(trace.summary))
    return 0


def _train(args) -> int:
    torch.set_num_threads(args.threads)
    for stage in list(train.STEPS) if args.stage == "all" else [args.stage]:
        train.run_stage(stage, args.steps)
    return 0


def _sweep(args) -> int:
    if len(args.param) != len(args.values):
        raise ValueError("give one --values list per --param")
    points = sweep.sweep_points(args.param, args.values)
    out = Path(args.out)
    if args.measure in front.PAIRED and args.noise != "keyed":
        raise ValueError(f"--measure {args.measure} compares each image with AR's under the same keyed noise: add "
                         "--noise keyed")
    base = {"noise": "keyed"} if args.noise == "keyed" else {}
    rows, new = sweep.sweep(args.method, points, bench.prompt_set(args.prompts), args.seeds, out, args.ray,
                            base=base)
    fig = pareto.figure(front.plot(rows, args.measure))
    fig.savefig(out.with_suffix(".png"), dpi=120)
    fig.savefig(out.with_suffix(".pdf"))
    print(f"{new} new points, {len(rows)} in {out}; plot: {out.with_suffix('.png')}")
    return 0


def _atlas(args) -> int:
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    todo = atlas_run.jobs(args.methods, args.prompts, args.seeds, args.noise)
    t0, c0 = time.perf_counter(), time.process_time()
    bar = tqdm(total=len(todo), desc="atlas", mininterval=1)

    def tick(done, total):
        bar.n = done
        bar.refresh()

    def load():
        model = load_model(args.model)
        return model, drafter_factory(model)
    if args.traces:
        Path(args.traces).mkdir(parents=True, exist_ok=True)
    rows, new = atlas_run.collect(todo, out, load, args.ray, args.model, tick, args.traces)
    bar.close()
    result = atlas.aggregate(rows)
    result["run"] = {"new_runs": new, "wall_seconds": round(time.perf_counter() - t0, 1),
                     "cpu_seconds_driver": round(time.process_time() - c0, 1), "torch_threads": args.threads,
                     "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    paths, _ = atlas_fig.export(result, out.with_suffix(""))
    print(atlas.markdown(result))
    if "paired" in result:
        print(atlas_paired.markdown(result))
    print(json.dumps({"claims": atlas.claims(result), **result["run"]}))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def _convert(args) -> int:
    # the converters load torch checkpoints' helpers only for `convert`
    from specviz.models.convert import main as convert_main
    return convert_main(args)


def main(argv=None) -> int:
    ap = _Parser(prog="python -m specviz", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    gen = sub.add_parser("generate", help="decode one image with one method; prints a JSON summary line last")
    _add_run_flags(gen)
    gen.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    gen.add_argument("--grid", default=None, help="assert the model's token grid, e.g. 16x16")
    gen.add_argument("--compile", action="store_true",
                     help="torch.compile the fixed-shape verification forwards (CUDA graphs on CUDA)")
    gen.add_argument("--out", default=None, help="image PNG path")
    gen.add_argument("--trace", default=None, help="trace JSON path")
    tr = sub.add_parser("train", help="train the embedded scenes model (resumable; weights go to assets/)")
    tr.add_argument("stage", choices=["tokenizer", "scorer", "target", "drafter", "all"])
    tr.add_argument("--threads", type=int, default=2, help="torch threads for the one training job")
    tr.add_argument("--steps", type=int, default=None, help="override the stage's step count")
    be = sub.add_parser("bench", help="same prompts and seeds for every method; Markdown table + JSON")
    bench_cli.add_arguments(be)
    sw = sub.add_parser("sweep", help="grid over rule parameters -> JSONL + Pareto plot")
    sw.add_argument("--method", default="csd", choices=list(METHODS))
    sw.add_argument("--param", action="append", required=True)
    sw.add_argument("--values", action="append", required=True)
    sw.add_argument("--prompts", type=int, default=4)
    sw.add_argument("--seeds", type=int, default=1)
    sw.add_argument("--out", default="sweep.jsonl")
    sw.add_argument("--ray", default=None)
    sw.add_argument("--noise", default="papers", choices=["papers", "keyed"],
                    help="keyed: every point paired with AR under the same keyed noise (--measure changed or psnr)")
    sw.add_argument("--measure", default="implausible", choices=list(front.MEASURES),
                    help="the plot's quality cost (y axis, lower is better)")
    at = sub.add_parser("atlas", help="where acceleration concentrates over many images -> JSONL, JSON, PNG/PDF")
    at.add_argument("--model", default="scenes")
    at.add_argument("--methods", nargs="+", default=["ar", "sjd", "csd", "cascade"], help="method specs, as bench")
    at.add_argument("--prompts", type=int, default=24)
    at.add_argument("--seeds", type=int, default=2)
    at.add_argument("--out", default="atlas.jsonl", help="resumable rows; the atlas goes beside it (.json, .png)")
    at.add_argument("--ray", default=None, help="fan out as Ray tasks: 'auto' or a cluster address")
    at.add_argument("--threads", type=int, default=1, help="torch CPU threads for local runs")
    at.add_argument("--traces", default=None, metavar="DIR", help="also save each local run's trace JSON here")
    at.add_argument("--noise", default="papers", choices=["papers", "keyed"],
                    help="keyed: every run paired with AR's image under the same keyed noise (changed tokens, PSNR)")
    # the converter's flags live beside it; imported here so the parser is built in one place
    from specviz.models.convert import add_parser as add_convert
    add_convert(sub)
    args = ap.parse_args(argv)
    try:
        return {"generate": _generate, "train": _train, "bench": bench_cli.main, "sweep": _sweep,
                "atlas": _atlas, "convert": _convert}[args.cmd](args)
    except (ValueError, FileNotFoundError) as e:                    # ConfigError is a ValueError
        sys.stderr.write(f"error: {e}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
