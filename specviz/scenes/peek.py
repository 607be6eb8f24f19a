"""Look at an in-training (or shipped) target: AR samples of held-out captions as a PNG grid, beside the real
scene drawn for the same caption, plus the token-ambiguity summary of those samples.

python -m specviz.scenes.peek [--ckpt .cache/train/target.safetensors] [--n 8] [--out /tmp/peek.png]
"""
from __future__ import annotations

import argparse
import json

import numpy as np
import torch
from PIL import Image

from specviz.core import ckpt
from specviz.core.detail import image_classes
from specviz.engine.codebook import neighbour_table
from specviz.engine.config import RunConfig
from specviz.models.scenes import ScenesModel
from specviz.scenes import ambiguity, data, world
from specviz.scenes.target import Target
from specviz.scenes.train import SCENES, load_vq


def load_checkpoint(path) -> tuple[ScenesModel, dict]:
    """A ScenesModel over the shipped VQ and a target checkpoint (training or shipped), and the checkpoint's meta."""
    target = Target(SCENES.target)
    meta = ckpt.load(path, target)
    return ScenesModel(target, load_vq(SCENES.assets / "vq.safetensors")), meta


def peek(model: ScenesModel, n: int, seed: int = 3) -> tuple[np.ndarray, dict]:
    """(grid image: rows of [sample | real scene] pairs, ambiguity summary) for n held-out captions."""
    rng = np.random.default_rng(seed)
    nbrs = neighbour_table(model, 8)
    tiles, stats, classes = [], [], []
    for i in range(n):
        s = data.random_scene(rng, held_out=True)
        tokens, laws = ambiguity.ar_laws(model, s.tokens(), RunConfig(seed=i))
        img = np.asarray(model.decode_image(tokens))
        tiles += [img, world.render(s, np.random.default_rng(i))]
        stats.append(ambiguity.position_stats(laws, nbrs))
        classes.append(image_classes(img, model.grid))
        print(i, s.caption(), f"mean entropy {stats[-1]['entropy'].mean():.2f}", flush=True)
    cols = 4
    rows = -(-len(tiles) // cols)
    tiles += [np.zeros_like(tiles[0])] * (rows * cols - len(tiles))
    size = tiles[0].shape[0]
    grid = np.stack(tiles).reshape(rows, cols, size, size, 3).transpose(0, 2, 1, 3, 4)
    cat = {k: np.concatenate([s[k] for s in stats]) for k in stats[0]}
    return grid.reshape(rows * size, cols * size, 3), ambiguity.summarise(cat, np.concatenate(classes))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ckpt", default=str(SCENES.work / "target.safetensors"))
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--out", default="/tmp/peek.png")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    model, meta = load_checkpoint(args.ckpt)
    grid, summary = peek(model, args.n)
    Image.fromarray(grid).resize((grid.shape[1] * 3, grid.shape[0] * 3), Image.NEAREST).save(args.out)
    print(json.dumps({"step": meta.get("step"), "out": args.out, **summary}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
