"""The engine's own cost per verification step: every registered method, both noises, on a zero-cost stub
target (specviz/engine/stub.py: its forward is a table lookup) at a real model's vocabulary, one thread.

For each (shape, method, noise) it drains decode() for --steps verification steps (AR: as many tokens) and reports
  ms/step   the median over steps of the CPU time of one step (time.thread_time: the decoding thread's own time,
            which other processes on a shared machine disturb far less than wall time) minus the stub's own
            forward time in that step;
  fwd ms    the median stub forward time (what was subtracted);
  syncs     device -> host reads per step (specviz/engine/syncs.HostReads: .item, .tolist, .cpu, .numpy, bool /
            int / float / index of a tensor), the mean over --sync-steps steps of a second run under the counter,
            after its first step (which also builds the run's tables once: the stub drafter's top tokens, LANTERN's
            neighbours, GSD's vectors); max: the most reads of one of those steps;
  ops/step  torch operator (aten) calls per step in that counted run (engine/syncs.OperatorCalls; the stub's own
            forward dispatches 7 of them): the engine's per-step fixed cost, a count a loaded machine does not move;
  tok/step  tokens committed per step in the timed run.
--repeat R: each row runs R times and keeps the run with the smallest median (a shared machine only ever slows a run
down: the least disturbed run is the closest to the engine's own cost).
The machine is shared: medians, not means. Shapes: V = 16,384 on 24x24 and 32x32 (LlamaGen's codebook), and
Lumina-mGPT's 8,192 image codes on its 48x48 grid at 768 px (codebook vectors of 256 dims).

python scripts/engine_bench.py [--steps 30] [--sync-steps 8] [--shapes 24 32 lumina] [--methods ...]
                               [--noises papers keyed] [--threads 1] [--repeat 1] [--tiny] [--json out.json]
--tiny: V = 64 on 6x6, 4 steps: a smoke run in seconds (tests/engine/test_engine_bench.py).
"""
import argparse
import json
import platform
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from specviz.engine import (
    registry,  # noqa: E402
)
from specviz.engine.config import RunConfig  # noqa: E402
from specviz.engine.decode import decode  # noqa: E402
from specviz.engine.stub import StubTarget, stub_factory  # noqa: E402
from specviz.engine.syncs import HostReads, OperatorCalls  # noqa: E402

SHAPES = {   # name -> (vocab, grid, codebook dims)
    "24": (16384, (24, 24), 8),
    "32": (16384, (32, 32), 8),
    "lumina": (8192, (48, 48), 256),
    "tiny": (64, (6, 6), 8),
}
NOISES = ("papers", "keyed")


def run_steps(model: StubTarget, cfg, steps: int, counter: HostReads | None = None,
              ops: OperatorCalls | None = None) -> list[tuple]:
    """Drain decode() for `steps` verification steps after the prefill: per step (seconds, forward seconds, host
    reads, tokens committed, operator calls)."""
    out, gen = [], decode(model, cfg, stub_factory)
    next(gen)                                             # the prefill and the first token
    done = 1
    for _ in range(steps):
        f0, c0, o0, t0 = model.spent, counter.count if counter else 0, ops.count if ops else 0, time.thread_time()
        try:
            prog = next(gen)
        except StopIteration:
            break
        sec = time.thread_time() - t0
        out.append((sec, model.spent - f0, (counter.count if counter else 0) - c0, len(prog.tokens) - done,
                    (ops.count if ops else 0) - o0))
        done = len(prog.tokens)
        if prog.done:
            break
    return out


def measure(shape: str, method: str, noise: str, steps: int, sync_steps: int, seed: int = 0, repeat: int = 1) -> dict:
    vocab, grid, dims = SHAPES[shape]
    cfg = RunConfig(method=method, prompt="stub", seed=seed, noise=noise)
    runs = [run_steps(StubTarget(vocab, grid, dims=dims, seed=seed), cfg, steps) for _ in range(repeat)]
    timed = min(runs, key=lambda r: statistics.median(s - f for s, f, *_ in r))   # the run least disturbed
    counter, ops = HostReads(), OperatorCalls()
    with counter, ops:
        counted = run_steps(StubTarget(vocab, grid, dims=dims, seed=seed), cfg, sync_steps + 1, counter, ops)[1:]
    return dict(shape=shape, method=method, noise=noise, steps=len(timed), repeat=repeat,
                ms=1e3 * statistics.median(s - f for s, f, *_ in timed),
                fwd_ms=1e3 * statistics.median(f for _, f, *_ in timed),
                syncs=sum(c for _, _, c, *_ in counted) / max(1, len(counted)),
                syncs_max=max((c for _, _, c, *_ in counted), default=0),
                ops=sum(o for *_, o in counted) / max(1, len(counted)),
                tokens=sum(k for _, _, _, k, _ in timed) / max(1, len(timed)))


def table(rows: list[dict]) -> str:
    lines = ["| shape | method | noise | ms/step | fwd ms | syncs/step | max | ops/step | tok/step |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        vocab, grid, _ = SHAPES[r["shape"]]
        lines.append(f"| {grid[0]}x{grid[1]}, V={vocab} | `{r['method']}` | {r['noise']} | {r['ms']:.2f} | "
                     f"{r['fwd_ms']:.3f} | {r['syncs']:.1f} | {r['syncs_max']} | {r['ops']:.0f} | {r['tokens']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--sync-steps", type=int, default=8)
    ap.add_argument("--shapes", nargs="+", default=["24"], choices=list(SHAPES))
    ap.add_argument("--methods", nargs="+", default=list(registry.METHODS))
    ap.add_argument("--noises", nargs="+", default=list(NOISES), choices=NOISES)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="runs per row; the least disturbed run's median is kept")
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.tiny:
        args.shapes, args.steps, args.sync_steps = ["tiny"], 4, 2
    torch.set_num_threads(args.threads)
    rows = []
    for shape in args.shapes:
        for method in args.methods:
            for noise in args.noises:
                rows.append(measure(shape, method, noise, args.steps, args.sync_steps, repeat=args.repeat))
                print(f"{shape} {method} {noise}: {rows[-1]['ms']:.2f} ms, {rows[-1]['syncs']:.1f} syncs",
                      file=sys.stderr, flush=True)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"Engine cost per verification step, {stamp}, {platform.machine()} {platform.processor() or ''} "
          f"torch {torch.__version__}, {args.threads} thread(s), {args.steps} steps (medians; the least disturbed of "
          f"{args.repeat} run(s) per row)\n")
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(dict(when=stamp, threads=args.threads, rows=rows), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
