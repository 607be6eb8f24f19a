"""The convolutional blocks both released VQGAN decoders are built from (taming-transformers' design, as used by
LlamaGen's VQ-16 and Chameleon's / Lumina-mGPT's VQGAN): GroupNorm(32, eps 1e-6), swish = x * sigmoid(x), a residual
block with a 1x1 shortcut when the width changes, single-head spatial self-attention with 1x1 convolutions scaled by
C^-1/2, and nearest x2 upsampling + 3x3 conv. Parameter names equal the released checkpoints' (norm1, conv1, norm2,
conv2, nin_shortcut; norm, q, k, v, proj_out; conv), so each decoder's state dict loads as released."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def norm(c: int) -> nn.GroupNorm:
    return nn.GroupNorm(32, c, eps=1e-6, affine=True)


def swish(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(x)


class ResBlock(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.norm1, self.conv1 = norm(cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.norm2, self.conv2 = norm(cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.nin_shortcut = nn.Conv2d(cin, cout, 1) if cin != cout else None

    def forward(self, x):
        h = self.conv2(swish(self.norm2(self.conv1(swish(self.norm1(x))))))
        return (x if self.nin_shortcut is None else self.nin_shortcut(x)) + h


class Attn(nn.Module):
    """Single-head spatial self-attention with 1x1 convolutions, scaled by C^-1/2."""

    def __init__(self, c: int):
        super().__init__()
        self.norm = norm(c)
        self.q, self.k, self.v, self.proj_out = (nn.Conv2d(c, c, 1) for _ in range(4))

    def forward(self, x):
        b, c, hh, ww = x.shape
        n = self.norm(x)
        q, k, v = (m(n).reshape(b, c, hh * ww) for m in (self.q, self.k, self.v))
        w = torch.softmax(torch.einsum("bci,bcj->bij", q, k) * c ** -0.5, dim=-1)     # (b, query, key)
        out = torch.einsum("bij,bcj->bci", w, v).reshape(b, c, hh, ww)
        return x + self.proj_out(out)


class Upsample(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))
