"""The decoder half of LlamaGen's VQ tokenizer (our own code after FoundationVision/LlamaGen
`tokenizer/tokenizer_image/vq_model.py`). Parameter names equal the released `vq_ds16_t2i.pt` keys (`decoder.*`,
`post_quant_conv.*`, `quantize.embedding.weight`); the encoder is never needed to draw images and is dropped by the
converter.

VQ-16: 16384 codes x 8 dims, l2-normalised before use; z_channels 256, ch 128, ch_mult (1, 1, 2, 2, 4), two residual
blocks per level (three on the way up), GroupNorm(32, eps 1e-6), swish, self-attention at the lowest resolution,
nearest x2 upsampling + 3x3 conv between levels: a 16x16 grid decodes to 256 px, 32x32 to 512 px.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from specviz.models.vq_blocks import Attn, ResBlock, Upsample, norm, swish


@dataclass
class VQConfig:
    codebook_size: int = 16384
    embed_dim: int = 8
    z_channels: int = 256
    ch: int = 128
    ch_mult: list = field(default_factory=lambda: [1, 1, 2, 2, 4])
    num_res_blocks: int = 2

    @property
    def downsample(self) -> int:
        return 2 ** (len(self.ch_mult) - 1)

    def to_dict(self) -> dict:
        return asdict(self)


class Level(nn.Module):
    def __init__(self, cin: int, cout: int, blocks: int, attn: bool, up: bool):
        super().__init__()
        self.res = nn.ModuleList(ResBlock(cin if i == 0 else cout, cout) for i in range(blocks))
        self.attn = nn.ModuleList(Attn(cout) for _ in range(blocks)) if attn else nn.ModuleList()
        if up:
            self.upsample = Upsample(cout)

    def forward(self, x):
        for i, r in enumerate(self.res):
            x = r(x)
            if len(self.attn):
                x = self.attn[i](x)
        return self.upsample(x) if hasattr(self, "upsample") else x


class Decoder(nn.Module):
    def __init__(self, cfg: VQConfig):
        super().__init__()
        n = len(cfg.ch_mult)
        c = cfg.ch * cfg.ch_mult[-1]
        self.conv_in = nn.Conv2d(cfg.z_channels, c, 3, padding=1)
        self.mid = nn.ModuleList([ResBlock(c, c), Attn(c), ResBlock(c, c)])
        levels = []
        for i in reversed(range(n)):                       # lowest resolution first; attention only there
            out = cfg.ch * cfg.ch_mult[i]
            levels.append(Level(c, out, cfg.num_res_blocks + 1, attn=i == n - 1, up=i != 0))
            c = out
        self.conv_blocks = nn.ModuleList(levels)
        self.norm_out = norm(c)
        self.conv_out = nn.Conv2d(c, 3, 3, padding=1)

    def forward(self, z):
        h = self.conv_in(z)
        for m in self.mid:
            h = m(h)
        for level in self.conv_blocks:
            h = level(h)
        return self.conv_out(swish(self.norm_out(h)))


class Quantize(nn.Module):
    def __init__(self, cfg: VQConfig):
        super().__init__()
        self.embedding = nn.Embedding(cfg.codebook_size, cfg.embed_dim)


class VQDecoder(nn.Module):
    """codes (B, H, W) -> pixels (B, 3, 16H, 16W) in about [-1, 1] (VQ-16)."""

    def __init__(self, cfg: VQConfig):
        super().__init__()
        self.cfg = cfg
        self.quantize = Quantize(cfg)
        self.post_quant_conv = nn.Conv2d(cfg.embed_dim, cfg.z_channels, 1)
        self.decoder = Decoder(cfg)

    def code_vectors(self) -> torch.Tensor:
        """(V, d) the codebook as the decoder sees it: l2-normalised rows."""
        return F.normalize(self.quantize.embedding.weight, p=2, dim=-1)

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        z = self.code_vectors()[codes].permute(0, 3, 1, 2)                         # (B, d, H, W)
        return self.decoder(self.post_quant_conv(z))
