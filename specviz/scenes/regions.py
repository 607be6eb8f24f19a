"""Region classes of the world per token (sky / ground / object) and a tiny per-token region head.

`world.render_layers` draws a scene and returns the pixel region mask of that very image (exact). The head
classifies each token of a decoded 64x64 image (the VQ decoder's output, as generated images are) into REGIONS from
its 4x4 patch and its neighbours. Trained on VQ round-trips of rendered training scenes; its accuracy is measured
on held-out caption combinations rendered with another seed and written to assets/regions.json.

python -m specviz.scenes.regions        (retrain; about a minute on one thread)
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from specviz.core import ckpt
from specviz.core.paths import assets_dir
from specviz.scenes import data, world
from specviz.scenes.train import load_vq
from specviz.scenes.vq import to_tensor, to_uint8

REGIONS = world.REGIONS
SKY, GROUND, OBJECT = range(3)
PATCH = 4
ASSETS = assets_dir()
HEAD_PATH = ASSETS / "regions.safetensors"


def render_with_regions(s: data.Scene, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(image uint8 (64, 64, 3) exactly as world.render(s, rng) draws it, pixel regions int (64, 64))."""
    return world.render_layers(s, rng)


def token_regions(pixel_regions: np.ndarray, patch: int = PATCH) -> np.ndarray:
    """(H/patch, W/patch) majority class of each patch (ties: the higher class, object > ground > sky)."""
    h, w = pixel_regions.shape
    blocks = pixel_regions.reshape(h // patch, patch, w // patch, patch).transpose(0, 2, 1, 3)
    counts = np.stack([(blocks == c).sum((2, 3)) for c in range(len(REGIONS))], -1)
    return len(REGIONS) - 1 - np.argmax(counts[..., ::-1], -1)


class RegionHead(nn.Module):
    """Per-token classifier: patchify (4x4, + a row coordinate) -> 3x3 context -> 3 logits per token."""

    def __init__(self, ch: int = 16):
        super().__init__()
        self.patch = nn.Conv2d(4, ch, PATCH, stride=PATCH)
        self.context = nn.Conv2d(ch, ch, 3, padding=1)
        self.out = nn.Conv2d(ch, len(REGIONS), 1)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """images (B, 3, H, W) in [-1, 1] -> logits (B, 3, H/4, W/4)."""
        b, _, h, w = images.shape
        rows = torch.linspace(-1, 1, h).view(1, 1, h, 1).expand(b, 1, h, w)
        x = F.relu(self.patch(torch.cat([images, rows], 1)))
        return self.out(F.relu(self.context(x)) + x)


def _as_input(images_uint8: np.ndarray) -> torch.Tensor:
    return to_tensor(np.ascontiguousarray(images_uint8))


@torch.no_grad()
def predict(head: RegionHead, images_uint8: np.ndarray) -> np.ndarray:
    """(B, H, W, 3) uint8 decoded images -> (B, H/4, W/4) region class per token."""
    return head(_as_input(images_uint8)).argmax(1).numpy()


@torch.no_grad()
def real_set(vq, n: int, seed: int, held_out: bool, batch: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """n rendered scenes through the VQ (encode, decode: what generated images look like) and their token regions."""
    rng = np.random.default_rng(seed)
    pairs = [render_with_regions(data.random_scene(rng, held_out), rng) for _ in range(n)]
    imgs = np.stack([p[0] for p in pairs])
    labels = np.stack([token_regions(p[1]) for p in pairs])
    out = [to_uint8(vq.decode(vq.encode(_as_input(imgs[i:i + batch]))[0])).numpy()
           for i in range(0, n, batch)]
    return np.concatenate(out), labels


def accuracy(head: RegionHead, images: np.ndarray, labels: np.ndarray) -> dict:
    pred = predict(head, images)
    per_class = {name: round(float((pred[labels == c] == c).mean()), 4) for c, name in enumerate(REGIONS)}
    return {"accuracy": round(float((pred == labels).mean()), 4), "recall": per_class,
            "tokens": int(labels.size)}


def train_head(n_train: int = 1200, n_test: int = 400, steps: int = 1500, seed: int = 0,
               out: Path = HEAD_PATH, vq=None) -> dict:
    """Train the head on VQ round-trips of training scenes; measure it on held-out combinations (another seed);
    write the weights (safetensors) and the accuracy JSON beside them. Returns the JSON."""
    t0, t_cpu = time.perf_counter(), time.process_time()
    torch.manual_seed(seed)
    vq = vq or load_vq()
    x, y = real_set(vq, n_train, seed, held_out=False)
    xt, yt = real_set(vq, n_test, seed + 1000, held_out=True)
    head = RegionHead()
    opt = torch.optim.Adam(head.parameters(), 3e-3)
    xs, ys = _as_input(x), torch.from_numpy(y).long()
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        idx = torch.randint(len(xs), (64,), generator=g)
        loss = F.cross_entropy(head(xs[idx]), ys[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    head.eval()
    report = {"held_out": accuracy(head, xt, yt), "train": accuracy(head, x, y), "train_scenes": n_train,
              "held_out_scenes": n_test, "steps": steps, "seed": seed,
              "parameters": sum(p.numel() for p in head.parameters()),
              "seconds": round(time.perf_counter() - t0, 1), "cpu_seconds": round(time.process_time() - t_cpu, 1),
              "torch_threads": torch.get_num_threads(),
              "labels": "majority class of the token's 4x4 pixels in the exact render mask (ties: object > ground)"}
    ckpt.save(out, head, {"regions": list(REGIONS)})
    Path(out).with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    return report


def load_head(path: Path = HEAD_PATH) -> RegionHead:
    head = RegionHead()
    ckpt.load(path, head)
    return head.eval()


if __name__ == "__main__":                                    # python -m specviz.scenes.regions
    torch.set_num_threads(1)
    print(json.dumps(train_head(), indent=1))
