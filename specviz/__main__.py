"""Command line: python -m specviz {generate,bench,sweep,train} ..."""
from __future__ import annotations

import argparse
import sys


def _train(args) -> int:
    import torch

    from specviz.scenes import train
    torch.set_num_threads(args.threads)
    stages = ["tokenizer", "scorer", "target", "drafter"] if args.stage == "all" else [args.stage]
    for stage in stages:
        getattr(train, f"train_{stage}")()
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m specviz", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    tr = sub.add_parser("train", help="train the embedded scenes model (resumable; weights go to assets/)")
    tr.add_argument("stage", choices=["tokenizer", "scorer", "target", "drafter", "all"])
    tr.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    return {"train": _train}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
