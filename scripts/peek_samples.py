"""Look at AR samples of an in-training (or shipped) target: a 4x4 grid PNG with held-out captions.

python scripts/peek_samples.py [checkpoint] [out.png]
"""
import sys

import numpy as np
import torch
from PIL import Image

from specviz import ckpt
from specviz.config import RunConfig
from specviz.decode import decode
from specviz.models.scenes import ScenesModel
from specviz.scenes import data
from specviz.scenes.target import Target, TargetConfig
from specviz.scenes.train import load_vq

torch.set_num_threads(1)
path = sys.argv[1] if len(sys.argv) > 1 else ".cache/train/target.safetensors"
out = sys.argv[2] if len(sys.argv) > 2 else "/tmp/peek.png"
t = Target(TargetConfig())
meta = ckpt.load(path, t)
m = ScenesModel(t, load_vq())
rng = np.random.default_rng(3)
tiles = []
for i in range(16):
    s = data.random_scene(rng, held_out=True)
    *_, last = decode(m, RunConfig(method="ar", seed=i, prompt=s.caption()))
    tiles.append(np.asarray(m.decode_image(torch.tensor(last.tokens))))
    print(i, s.caption())
grid = np.stack(tiles).reshape(4, 4, 48, 48, 3).transpose(0, 2, 1, 3, 4).reshape(192, 192, 3)
Image.fromarray(grid).resize((576, 576), Image.NEAREST).save(out)
print("step", meta.get("step"), "->", out)
