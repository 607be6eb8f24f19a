"""Per-step cost floor of tree methods on the embedded model: the target forward over N draft nodes, in units of a
one-token forward, at mid-image (position 128, CFG 3, one torch thread). Best of R repeats.

python scripts/tree_cost.py [--nodes 1 2 3 25] [--repeats 30]
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from specviz.models.scenes import ScenesModel  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 3, 7, 25])
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args()
    torch.set_num_threads(1)
    m = ScenesModel.load()
    pre = m.prefill("a red house on the left, a sunset sky over snow", 3.0)
    st_ = pre.state
    m.forward(st_, torch.zeros(128, dtype=torch.long), torch.arange(128))
    m.commit(st_, torch.arange(128))
    res = {}
    for n in args.nodes:
        mask = torch.tril(torch.ones(n, n, dtype=torch.bool))
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            m.forward(st_, torch.randint(0, m.codebook_size, (n,)), 128 + torch.arange(n) // 2, mask)
            times.append(time.perf_counter() - t0)
            m.commit(st_, torch.arange(0))
        res[n] = min(times)
    base = res.get(1) or min(res.values())
    params = sum(p.numel() for p in m.target.parameters())
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, 1 torch thread, scenes ({params:,} params), "
          f"forward at position 128, best of {args.repeats}")
    for n, t in res.items():
        print(f"forward over {n:>2} nodes: {t * 1e3:.3f} ms = {t / base:.2f} one-token forwards")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
