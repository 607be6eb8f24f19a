"""The floor under a verification step's engine work: the passes over (k, V) it cannot skip, one small operator, and
the alternatives to the keyed CSD's binning, each timed alone (docs/benchmarks.md, "The merged stop").

Per line: the median of --repeat timings (time.thread_time, one thread) of one call at V = 16,384 (LlamaGen's and
Janus-Pro's codebook):
  softmax of 16 rows          the target's laws of a 16-slot Jacobi window (every chain step);
  cumsum of 15 rows           the refined drafts' inverse-CDF draw with the papers' noise (every chain step);
  entropy pass of 15 rows     sampling.entropy_from_logits (CSD's rule reads H at every slot);
  one small operator          a `where` over (1,) tensors: the dispatch cost of the ~150 other operators of a step;
  binning 16,384 ratios       change_prob's exact J (keyed CSD, each judged relaxed row): searchsorted into the 64
                              heaviest codes' ratios (today), bucketize, a 64 x V comparison, a sort of the row;
--compile adds torch.compile of the entropy pass (its compile seconds, then its time): what a compiled step would buy
for the passes (they are memory-bound).

python scripts/engine_passes.py [--repeat 300] [--compile]
"""
import argparse
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from specviz.core.sampling import entropy_from_logits  # noqa: E402

V = 16384


def timed(fn, repeat: int) -> float:
    """ms: the median of `repeat` calls (after one warm-up)."""
    fn()
    ts = []
    for _ in range(repeat):
        t0 = time.thread_time()
        fn()
        ts.append(time.thread_time() - t0)
    return 1e3 * statistics.median(ts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--compile", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    z = torch.randn(16, V, generator=g) * 3
    q = z.softmax(-1)
    r = torch.rand(1, V, generator=g, dtype=torch.float64)
    t = r[:, :64].sort(-1).values.contiguous()
    a, b = torch.zeros(1), torch.ones(1)
    rows = [("softmax of 16 rows", lambda: z.softmax(-1)),
            ("cumsum of 15 rows", lambda: q[:15].cumsum(-1)),
            ("entropy pass of 15 rows", lambda: entropy_from_logits(q[:15], z[:15])),
            ("one small operator", lambda: torch.where(a > 0, a, b)),
            ("binning: searchsorted (today)", lambda: torch.searchsorted(t, r)),
            ("binning: bucketize", lambda: torch.bucketize(r[0], t[0])),
            ("binning: 64 x V comparison", lambda: (r[0][:, None] > t[0][None, :]).sum(-1)),
            ("binning: sort of the row", lambda: r.sort(-1))]
    out = [(name, timed(fn, args.repeat)) for name, fn in rows]
    if args.compile:
        t0 = time.time()
        fn = torch.compile(entropy_from_logits, dynamic=False)
        fn(q[:15], z[:15])
        out.append(("entropy pass, torch.compile: compile seconds", time.time() - t0))
        out.append(("entropy pass, torch.compile", timed(lambda: fn(q[:15], z[:15]), args.repeat)))
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"Engine passes at V = {V}, {stamp}, torch {torch.__version__}, one thread, medians of {args.repeat}\n")
    print("| what | ms (compile: s) |\n|---|---|")
    for name, v in out:
        print(f"| {name} | {v:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
