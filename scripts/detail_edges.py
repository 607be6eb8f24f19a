"""Where core/detail.py's DETAIL_EDGES come from: the terciles of the patch detail of VQ round-trips of real `scenes`
images (training scenes, drawn by specviz.scenes.world, encoded and decoded by the shipped tokenizer), and the share
of positions in each class under the shipped edges.

python scripts/detail_edges.py [--scenes 600] [--seed 0]
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from specviz.core.detail import DETAIL_CLASSES, DETAIL_EDGES, detail_class, patch_detail  # noqa: E402
from specviz.scenes import world  # noqa: E402
from specviz.scenes.train import SCENES, load_vq  # noqa: E402
from specviz.scenes.vq import to_tensor, to_uint8  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenes", type=int, default=600)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    vq = load_vq(SCENES.assets / "vq.safetensors")
    imgs, _ = world.batch(np.random.default_rng(args.seed), args.scenes)
    with torch.no_grad():
        rec = np.concatenate([to_uint8(vq.decode(vq.encode(to_tensor(imgs[i:i + 50]))[0])).numpy()
                              for i in range(0, len(imgs), 50)])
    grid = (vq.encode(to_tensor(imgs[:1]))[0].shape[1:])
    d = np.concatenate([patch_detail(r, grid).reshape(-1) for r in rec])
    shares = np.bincount(detail_class(d), minlength=3) / d.size
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {args.scenes} training scenes (seed {args.seed}), "
          f"VQ round-trips, {d.size:,} patches")
    print("terciles:", ", ".join(f"{q:.2f}" for q in np.quantile(d, [1 / 3, 2 / 3])))
    print(f"shares under DETAIL_EDGES {DETAIL_EDGES}:",
          ", ".join(f"{n} {s:.3f}" for n, s in zip(DETAIL_CLASSES, shares)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
