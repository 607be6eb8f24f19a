"""The price of keyed noise (docs/methods.md §9): step compression and wall time of every method under
`--noise keyed` against the papers' sampling, on the bench's prompts (bench.prompt_set, one seed per prompt), the two
modes interleaved image by image so machine noise hits both alike; medians over the images, one run each. Under
keyed noise it also checks every lossless method's tokens against AR's keyed tokens (identical count).

python scripts/keyed_price.py [--images 24] [--methods ar sjd ...] [--threads 1] [--json out.json]
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

from specviz.analysis.bench import prompt_set  # noqa: E402
from specviz.engine import (
    registry,  # noqa: E402
)
from specviz.engine.config import RunConfig  # noqa: E402
from specviz.models import load_model  # noqa: E402
from specviz.models.runner import run  # noqa: E402

MODES = ("papers", "keyed")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=24)
    ap.add_argument("--methods", nargs="+", default=list(registry.METHODS))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = load_model("scenes", "cpu")
    rows = {(m, mode): [] for m in args.methods for mode in MODES}
    ar_keyed, identical = {}, {m: 0 for m in args.methods}
    for i, (caption, _) in enumerate(prompt_set(args.images)):
        for m in ["ar"] + [x for x in args.methods if x != "ar"]:
            for mode in MODES:
                t0 = time.perf_counter()
                tr = run(RunConfig(method=m, prompt=caption, seed=i, noise=mode), model=model)
                secs = time.perf_counter() - t0
                if (m, mode) in rows:
                    rows[(m, mode)].append((tr.summary["step_compression"], secs))
                if mode == "keyed":
                    if m == "ar":
                        ar_keyed[i] = tr.tokens
                    identical[m] = identical.get(m, 0) + (tr.tokens == ar_keyed[i])
        print(f"image {i + 1}/{args.images} done", file=sys.stderr, flush=True)
    out = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "images": args.images,
           "machine": f"{platform.processor() or platform.machine()}, torch threads {args.threads}", "methods": {}}
    print("| method | compression papers | compression keyed | wall s papers | wall s keyed | keyed/papers wall "
          "| identical to AR (keyed) |\n|---|---|---|---|---|---|---|")
    for m in args.methods:
        c = {mode: statistics.median(x[0] for x in rows[(m, mode)]) for mode in MODES}
        s = {mode: statistics.median(x[1] for x in rows[(m, mode)]) for mode in MODES}
        lossless = registry.get(m).lossless
        out["methods"][m] = {"compression": c, "seconds": s, "identical": identical[m], "lossless": lossless}
        print(f"| {m} | {c['papers']:.3f} | {c['keyed']:.3f} | {s['papers']:.2f} | {s['keyed']:.2f} | "
              f"{s['keyed'] / s['papers']:.3f} | {identical[m]}/{args.images} |")
    print(f"\n{out['date']}, {out['machine']}, {args.images} images (medians, one run each)")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
