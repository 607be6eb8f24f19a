"""Estimate `python -m specviz train all` on this machine without running it for hours: run every stage for a few
steps in a temporary work/assets folder (the shipped assets are never touched), split each stage's wall time into
its fixed part (data pools, evaluations) and its per-step part (the training loop, from the stage's own record),
and extrapolate to the default step counts (train.STEPS).

python scripts/train_estimate.py [--steps 12] [--threads 2]
"""
import argparse
import json
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from specviz.scenes import train  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tmp = Path(tempfile.mkdtemp(prefix="specviz_train_estimate_"))
    try:
        assets, work = tmp / "assets", tmp / "work"
        shutil.copytree(train.SCENES.assets, assets, ignore=shutil.ignore_patterns("*.png", "*.md"))
        (assets / "training.json").unlink()
        stack = replace(train.SCENES, assets=assets, work=work)
        rows, total = [], 0.0
        for stage in train.STEPS:                        # tokenizer, scorer, target, drafter: the order of "all"
            if stage in ("target", "drafter"):           # trained on the shipped tokenizer / target, as "all" would
                shutil.copy(train.SCENES.assets / "vq.safetensors", assets / "vq.safetensors")
            if stage == "drafter":
                shutil.copy(train.SCENES.assets / "target.safetensors", assets / "target.safetensors")
            t0 = time.perf_counter()
            train.run_stage(stage, args.steps, stack)
            wall = time.perf_counter() - t0
            loop = json.loads((assets / "training.json").read_text())[stage]["seconds"]
            per_step, fixed = loop / args.steps, max(0.0, wall - loop)
            est = fixed + per_step * train.STEPS[stage]
            total += est
            rows.append(f"| {stage} | {train.STEPS[stage]} | {per_step:.2f} | {fixed:.0f} | {est / 60:.1f} |")
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {args.threads} torch threads, "
              f"{args.steps} steps per stage")
        print("| stage | default steps | s / step | fixed s | estimate min |\n|---|---|---|---|---|")
        print("\n".join(rows))
        print(f"| all | | | | {total / 60:.0f} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
