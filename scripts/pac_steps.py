"""SJD-PAC's operator calls per verification step, its deep steps apart: on the zero-cost stub target
(specviz/engine/stub.py) at 24x24, V = 16,384 (scripts/engine_bench.py's shape), one thread, --steps steps after the
first, counted per step (engine/syncs: OperatorCalls, HostReads). A deep step is one whose walk goes below the root:
it reads twice (the root's level, then the subtree it goes into: levelpack.Ahead); a step whose walk ends on the
root's level reads once. Prints per noise: steps, mean ops/step, the shallow and the deep steps' mean (deep: also
the most), reads/step mean (most).

python scripts/pac_steps.py [--steps 100] [--noises papers keyed] [--tiny]
"""
import argparse
import platform
import statistics
import sys
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
from engine_bench import SHAPES, run_steps  # noqa: E402

from specviz.engine.config import RunConfig  # noqa: E402
from specviz.engine.stub import StubTarget  # noqa: E402
from specviz.engine.syncs import HostReads, OperatorCalls  # noqa: E402


def count(noise: str, steps: int, shape: str = "24", seed: int = 0) -> dict:
    """Per-step (reads, ops) of SJD-PAC's `steps` steps after the first, and their summary."""
    vocab, grid, dims = SHAPES[shape]
    reads, ops = HostReads(), OperatorCalls()
    with reads, ops:
        rows = run_steps(StubTarget(vocab, grid, dims=dims, seed=seed),
                         RunConfig(method="sjdpac", prompt="stub", seed=seed, noise=noise), steps + 1, reads, ops)[1:]
    per = [(r[2], r[4]) for r in rows]
    deep, shallow = [o for c, o in per if c >= 2], [o for c, o in per if c < 2]
    return dict(noise=noise, steps=len(per), per=per, ops=statistics.mean(o for _, o in per),
                shallow=statistics.mean(shallow) if shallow else None, deep=statistics.mean(deep) if deep else None,
                deep_n=len(deep), deep_max=max(deep, default=None), reads=statistics.mean(c for c, _ in per),
                reads_max=max(c for c, _ in per))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--noises", nargs="+", default=["papers", "keyed"])
    ap.add_argument("--tiny", action="store_true", help="V = 64 on 6x6: a smoke run")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()}, torch {torch.__version__}")
    for noise in args.noises:
        r = count(noise, args.steps, "tiny" if args.tiny else "24")
        deep = f"{r['deep']:.0f} (most {r['deep_max']})" if r["deep_n"] else "none"
        shallow = f"{r['shallow']:.0f}" if r["shallow"] is not None else "none"
        print(f"{noise}: {r['steps']} steps, ops/step {r['ops']:.1f}; shallow {shallow}; {r['deep_n']} deep: {deep}; "
              f"reads/step {r['reads']:.2f} (most {r['reads_max']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
