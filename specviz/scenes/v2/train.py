"""Training of the scenes v2 stack (issue 13): the v1 stages (specviz.scenes.train) run on the v2 `Stack`.

Shapes were chosen from measurements on the 2-core machine (one thread, fp32, which beat bf16 autocast there):
VQ ch=48 at 1.1 s/step; 2048 l2-normalised codes of dim 8 (LlamaGen-style: low-dim, redundant). Weights go to
assets/v2/, resumable checkpoints to .cache/train_v2/.

python -m specviz.scenes.v2.train STAGE [STAGE ...] [--steps N] [--threads T]
    STAGE: tokenizer, scorer, target, drafter or all; stages run one after another, each resumable
"""
from __future__ import annotations

import argparse
from pathlib import Path

import torch

from specviz.paths import assets_dir
from specviz.scenes import train
from specviz.scenes.target import TargetConfig
from specviz.scenes.v2 import world

ROOT = Path(__file__).resolve().parents[3]
V2 = train.Stack(assets=assets_dir() / "v2", work=ROOT / ".cache" / "train_v2", batch=world.batch,
                 vq={"codes": 2048, "dim": 8, "ch": 48},
                 target=TargetConfig(codes=2048, grid=world.GRID, dim=192, layers=6, heads=6), bf16=False,
                 size=world.SIZE)
STEPS = {"tokenizer": 900, "scorer": 1000, "target": 4000, "drafter": 600}     # "all" runs them in this order


def run_stage(stage: str, steps: int | None = None) -> None:
    """One v2 stage with its default (or the given) number of steps."""
    fn = getattr(train, f"train_{stage}")
    fn(steps=steps or STEPS[stage], stack=V2)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("stages", nargs="+", choices=[*STEPS, "all"])
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    for stage in (list(STEPS) if "all" in args.stages else args.stages):
        run_stage(stage, args.steps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
