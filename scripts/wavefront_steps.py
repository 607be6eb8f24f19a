"""ZipAR and PJD against SJD on the shipped scenes model (docs/methods.md §10): per method, under keyed noise, the
median step compression and wall time over the bench's prompts (bench.prompt_set, seed = prompt index, one run each),
the tokens changed against AR's keyed tokens (mean with its standard error), the PSNR of the decoded image against
AR's (mean with its standard error over the images that differ; an identical image's PSNR is infinite), the mean
missing context per token, and for zipar the forward count checked against its closed form 2W + (H - 2)·min(w, W).

python scripts/wavefront_steps.py [--images 8] [--methods sjd zipar pjd] [--threads 1]
"""
import argparse
import platform
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from specviz.analysis.bench import prompt_set  # noqa: E402
from specviz.analysis.context import missing_context  # noqa: E402
from specviz.analysis.paired import pixel_diff  # noqa: E402
from specviz.core.numbers import standard_error  # noqa: E402
from specviz.engine import zipar  # noqa: E402
from specviz.engine.config import RunConfig  # noqa: E402
from specviz.models import load_model  # noqa: E402
from specviz.models.runner import run  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=8)
    ap.add_argument("--methods", nargs="+", default=["sjd", "zipar", "pjd"])
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = load_model("scenes", "cpu")
    h, w = model.grid
    rows = {m: [] for m in ["ar"] + args.methods}
    for i, (caption, _) in enumerate(prompt_set(args.images)):
        ar = ar_img = None
        for m in rows:
            cfg = RunConfig(method=m, prompt=caption, seed=i, noise="keyed")
            t0 = time.perf_counter()
            tr = run(cfg, model=model)
            secs = time.perf_counter() - t0
            ar = tr.tokens if m == "ar" else ar
            img = np.asarray(model.decode_image(tr.tokens))
            ar_img = img if m == "ar" else ar_img
            db = pixel_diff(img, ar_img)[0]
            if m == "zipar":
                assert tr.summary["target_forwards"] == zipar.forwards(h, w, cfg.zipar_w), tr.summary
            changed = sum(a != b for a, b in zip(tr.tokens, ar))
            rows[m].append((tr.summary["step_compression"], secs, changed, float(np.nanmean(missing_context(tr))), db))
        print(f"image {i + 1}/{args.images} done", file=sys.stderr, flush=True)
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, torch "
          f"threads {args.threads}, scenes {h} x {w}, {args.images} images, keyed noise, default knobs")
    print("| method | step compression (median) | wall s (median) | changed vs AR (mean ± se) | PSNR vs AR dB (mean ± "
          "se, images that differ) | missing context per token (mean) |\n|---|---|---|---|---|---|")
    for m, r in rows.items():
        comp, secs, changed, miss, dbs = (list(x) for x in zip(*r))
        finite = [d for d in dbs if np.isfinite(d)]
        psnr = f"{statistics.mean(finite):.2f} ± {standard_error(finite):.2f} ({len(finite)})" if finite else "— (0)"
        print(f"| `{m}` | {statistics.median(comp):.3f} | {statistics.median(secs):.2f} | "
              f"{statistics.mean(changed):.1f} ± {standard_error(changed):.1f} | {psnr} | "
              f"{statistics.mean(miss):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
