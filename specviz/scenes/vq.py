"""A small VQ-VAE: an RGB image <-> a grid of codes at a quarter of its side (64x64 <-> 16x16 in the shipped model).

Codes and latents are l2-normalised and matched by cosine similarity; straight-through gradients; dead codes are
re-initialised from the batch's encodings (usage EMA initialised at 0: docs/calibration.md lesson 3).
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class ResBlock(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.body = nn.Sequential(nn.GroupNorm(8, c), nn.SiLU(), nn.Conv2d(c, c, 3, padding=1),
                                  nn.GroupNorm(8, c), nn.SiLU(), nn.Conv2d(c, c, 3, padding=1))

    def forward(self, x):
        return x + self.body(x)


class VQVAE(nn.Module):
    def __init__(self, codes: int = 512, dim: int = 32, ch: int = 64):
        super().__init__()
        self.codes, self.dim = codes, dim
        self.enc = nn.Sequential(
            nn.Conv2d(3, ch, 3, padding=1), ResBlock(ch),
            nn.Conv2d(ch, ch, 4, stride=2, padding=1), ResBlock(ch),          # 1/2
            nn.Conv2d(ch, ch, 4, stride=2, padding=1), ResBlock(ch),          # 1/4
            nn.GroupNorm(8, ch), nn.SiLU(), nn.Conv2d(ch, dim, 1))
        self.dec = nn.Sequential(
            nn.Conv2d(dim, ch, 3, padding=1), ResBlock(ch), ResBlock(ch),
            nn.ConvTranspose2d(ch, ch, 4, stride=2, padding=1), ResBlock(ch),  # 1/2
            nn.ConvTranspose2d(ch, ch, 4, stride=2, padding=1), ResBlock(ch),  # full size
            nn.GroupNorm(8, ch), nn.SiLU(), nn.Conv2d(ch, 3, 3, padding=1))
        self.codebook = nn.Parameter(F.normalize(torch.randn(codes, dim), dim=1))
        self.register_buffer("usage", torch.zeros(codes))

    def code_vectors(self) -> torch.Tensor:
        """(codes, dim) l2-normalised code vectors (the geometry LANTERN/GSD distances use)."""
        return F.normalize(self.codebook, dim=1)

    def encode(self, img: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """img (B, 3, H, W) in [-1, 1] -> codes (B, H/4, W/4) long, latents (B, dim, H/4, W/4) normalised."""
        z = F.normalize(self.enc(img), dim=1)
        b, d, h, w = z.shape
        sim = z.permute(0, 2, 3, 1).reshape(-1, d) @ self.code_vectors().T        # (B*h*w, codes)
        return sim.argmax(1).view(b, h, w), z

    def decode(self, codes: torch.Tensor) -> torch.Tensor:
        """codes (B, h, w) -> images (B, 3, 4h, 4w) in about [-1, 1]."""
        q = self.code_vectors()[codes].permute(0, 3, 1, 2)
        return self.dec(q)

    def forward(self, img: torch.Tensor):
        codes, z = self.encode(img)
        q = self.code_vectors()[codes].permute(0, 3, 1, 2)
        commit = F.mse_loss(z, q.detach())
        codebook = F.mse_loss(q, z.detach())
        out = self.dec(z + (q - z).detach())                                   # straight-through
        return out, codes, commit, codebook

    @torch.no_grad()
    def revive_dead_codes(self, codes: torch.Tensor, z: torch.Tensor, decay: float = 0.99, thresh: float = 0.05):
        counts = torch.bincount(codes.flatten(), minlength=self.codes).float()
        self.usage.mul_(decay).add_(counts, alpha=1 - decay)
        dead = (self.usage < thresh).nonzero().flatten()
        if len(dead):
            pool = z.permute(0, 2, 3, 1).reshape(-1, self.dim)
            pick = pool[torch.randint(len(pool), (len(dead),), device=pool.device)]
            self.codebook.data[dead] = pick + 0.01 * torch.randn_like(pick)
            self.usage[dead] = thresh * 2
        return len(dead)


def to_tensor(images_uint8) -> torch.Tensor:
    """(B, H, W, 3) uint8 numpy -> (B, 3, H, W) float in [-1, 1]."""
    return torch.from_numpy(images_uint8).permute(0, 3, 1, 2).float().div(127.5).sub(1)


def to_uint8(x: torch.Tensor) -> torch.Tensor:
    """(B, 3, H, W) in [-1, 1] -> (B, H, W, 3) uint8."""
    return ((x.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).permute(0, 2, 3, 1)
