"""The scorer: a small CNN that reads a scene's five attributes back from its pixels.

It is the judge of generated scenes: `fidelity` is the fraction of a caption's specified fields that the scorer
finds in the image, and `frechet_distance` compares Gaussian fits of its penultimate `features` (an FID-like
distance in this tiny world). Trained on fresh procedural scenes by `specviz.scenes.train.train_scorer`.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

from specviz.core import ckpt
from specviz.core.paths import assets_dir
from specviz.scenes import data, world
from specviz.scenes.vq import to_tensor

FIELD_SIZES = tuple(len(v) for v in data.FIELDS.values())
_OFFSETS = np.cumsum([0] + [n + 1 for n in FIELD_SIZES[:-1]])      # caption token block start per field
DEFAULT_PATH = assets_dir() / "scorer.safetensors"


def _as_input(images, size: int = world.SIZE) -> torch.Tensor:
    """uint8 images (B, size, size, 3), numpy or torch -> (B, 3, size, size) float in [-1, 1]."""
    if torch.is_tensor(images):
        images = images.detach().cpu().numpy()
    images = np.ascontiguousarray(images)
    if images.dtype != np.uint8:
        raise TypeError(f"the scorer takes uint8 images (B, {size}, {size}, 3), got dtype {images.dtype}")
    if images.ndim != 4 or images.shape[1:] != (size, size, 3):
        raise ValueError(f"the scorer takes images shaped (B, {size}, {size}, 3), got {images.shape}")
    return to_tensor(images)


def _block(cin: int, cout: int, stride: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Scorer(nn.Module):
    """Conv net 48x48 (or `size`) -> 6x6 (8x8 for 64) -> 3x3 pooled grid (keeps left/centre/right apart) -> F
    features -> five heads."""

    def __init__(self, ch: int = 32, feat: int = 128, size: int = world.SIZE):
        super().__init__()
        self.size = size
        self.body = nn.Sequential(
            _block(3, ch, 1), _block(ch, ch, 1),                 # 48x48
            _block(ch, 2 * ch, 2),                               # 24x24
            _block(2 * ch, 2 * ch, 2),                           # 12x12
            _block(2 * ch, 4 * ch, 2),                           # 6x6
            nn.AdaptiveAvgPool2d(3))                             # 3x3
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(4 * ch * 9, feat), nn.ReLU(inplace=True))
        self.heads = nn.ModuleList(nn.Linear(feat, n) for n in FIELD_SIZES)
        self.feat_dim = feat

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """Float input (B, 3, 48, 48) in [-1, 1] -> penultimate features (B, F)."""
        return self.fc(self.body(x))

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Float input (B, 3, 48, 48) in [-1, 1] -> five logit tensors (B, n_field)."""
        h = self.embed(x)
        return [head(h) for head in self.heads]

    @torch.no_grad()
    def _batched(self, images, fn, chunk: int = 512) -> torch.Tensor:
        was = self.training
        self.eval()
        try:
            x = _as_input(images, self.size)
            return torch.cat([fn(x[i:i + chunk]) for i in range(0, len(x), chunk)]) if len(x) else fn(x)
        finally:
            self.train(was)

    def predict(self, images_uint8) -> torch.Tensor:
        """uint8 images (B, size, size, 3) -> (B, 5) long attribute indices (field order of data.FIELDS)."""
        return self._batched(images_uint8, lambda x: torch.stack([o.argmax(1) for o in self(x)], 1))

    def features(self, images_uint8) -> torch.Tensor:
        """uint8 images (B, size, size, 3) -> (B, F) float penultimate features."""
        return self._batched(images_uint8, self.embed)


def load_scorer(path=None) -> Scorer:
    """The trained scorer from assets/scorer.safetensors (or `path`), in eval mode."""
    path = Path(path or DEFAULT_PATH)
    if not path.exists():
        raise FileNotFoundError(f"no scorer weights at {path}; train them with: python -m specviz train scorer")
    meta = ckpt.read_meta(path)
    model = Scorer(**meta.get("config", {}))
    ckpt.load(path, model)
    return model.eval()


def fidelity(scorer, images_uint8, caption_tokens) -> np.ndarray:
    """Per image: the fraction of the caption's specified (non-null) fields whose value the scorer finds.

    caption_tokens (B, 5) use data's layout: token = offset(field) + value index, null = offset + len(values).
    A caption with no specified field scores 1.0 (nothing asked, nothing missed). `scorer` is a Scorer or any
    callable/object with `predict(images) -> (B, 5)` indices.
    """
    toks = np.asarray(torch.as_tensor(caption_tokens).cpu(), dtype=np.int64)
    if toks.ndim != 2 or toks.shape[1] != len(FIELD_SIZES):
        raise ValueError(f"caption_tokens must be (B, {len(FIELD_SIZES)}), got {toks.shape}")
    idx = toks - _OFFSETS[None, :]
    sizes = np.asarray(FIELD_SIZES)[None, :]
    if (idx < 0).any() or (idx > sizes).any():
        raise ValueError("caption_tokens outside their fields' token blocks")
    pred = scorer.predict(images_uint8) if hasattr(scorer, "predict") else scorer(images_uint8)
    pred = np.asarray(torch.as_tensor(pred).cpu(), dtype=np.int64)
    if pred.shape != toks.shape:
        raise ValueError(f"predictions {pred.shape} do not match captions {toks.shape}")
    specified = idx < sizes
    hits = (pred == idx) & specified
    n = specified.sum(1)
    return np.where(n > 0, hits.sum(1) / np.maximum(n, 1), 1.0)


def _sqrt_psd(s: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eigh((s + s.T) / 2)
    return (v * np.sqrt(np.clip(w, 0, None))) @ v.T


def frechet_distance(feats_a, feats_b) -> float:
    """Fréchet distance between Gaussian fits of two feature sets (N, F):
    |mu_a - mu_b|^2 + tr(S_a) + tr(S_b) - 2 tr((S_a S_b)^(1/2)), in float64.

    The trace term uses the symmetric form tr((S_a^(1/2) S_b S_a^(1/2))^(1/2)) = sum of square roots of the
    eigenvalues of a symmetric PSD matrix (eigh, tiny negative round-off clipped to 0), so it stays real and finite
    even for singular covariances (fewer samples than features), where sqrtm of S_a S_b goes complex.
    """
    a = np.asarray(torch.as_tensor(feats_a).detach().cpu(), dtype=np.float64)
    b = np.asarray(torch.as_tensor(feats_b).detach().cpu(), dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"feature sets must be (N, F) with equal F, got {a.shape} and {b.shape}")
    if len(a) < 2 or len(b) < 2:
        raise ValueError("frechet_distance needs at least two samples per set")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("frechet_distance: features contain NaN or inf")
    mu_a, mu_b = a.mean(0), b.mean(0)
    s_a, s_b = np.atleast_2d(np.cov(a, rowvar=False)), np.atleast_2d(np.cov(b, rowvar=False))
    root_a = _sqrt_psd(s_a)
    m = root_a @ s_b @ root_a
    tr_covmean = np.sqrt(np.clip(np.linalg.eigvalsh((m + m.T) / 2), 0, None)).sum()
    diff = mu_a - mu_b
    d = diff @ diff + np.trace(s_a) + np.trace(s_b) - 2 * tr_covmean
    return float(max(d, 0.0))
