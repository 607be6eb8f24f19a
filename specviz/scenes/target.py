"""The target: a small decoder-only transformer over [5 caption tokens; 144 image codes].

Pre-LN blocks, learned absolute positions plus row/column embeddings for image tokens. The same weights serve
training (full causal sequence) and decoding (`attend`: new tokens against a preallocated KV cache with an explicit
mask — never `is_causal` with a cache, docs/calibration.md lesson 4).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from specviz.models.base import write_kv
from specviz.scenes.data import CAPTION_LEN, CAPTION_VOCAB


@dataclass(frozen=True)
class TargetConfig:
    codes: int = 512
    grid: int = 12
    dim: int = 192
    layers: int = 6
    heads: int = 6

    @property
    def seq_len(self) -> int:
        return CAPTION_LEN + self.grid * self.grid

    def to_dict(self):
        return asdict(self)


class Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, mask=None, cache=None, start=0):
        """x (B, N, dim). With cache=(k, v) of shape (B, heads, Tmax, dh): writes this block's keys/values at
        slots start..start+N (`start` an int, or a tensor of the N slots: an index copy, the static-cache path) and
        attends to the first mask.shape[-1] slots under `mask` (N, start+N or Tmax) bool."""
        b, n, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if cache is None:
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            write_kv(cache, start, k, v)
            kc, vc = cache
            w = mask.shape[-1]
            a = F.scaled_dot_product_attention(q, kc[:, :, :w], vc[:, :, :w], attn_mask=mask)
        x = x + self.proj(a.transpose(1, 2).reshape(b, n, d))
        return x + self.mlp(self.ln2(x))


class Target(nn.Module):
    def __init__(self, cfg: TargetConfig):
        super().__init__()
        self.cfg = cfg
        d = cfg.dim
        self.cap_emb = nn.Embedding(CAPTION_VOCAB, d)
        self.img_emb = nn.Embedding(cfg.codes, d)
        self.pos_emb = nn.Parameter(torch.zeros(cfg.seq_len, d))
        self.row_emb = nn.Parameter(torch.zeros(cfg.grid, d))
        self.col_emb = nn.Parameter(torch.zeros(cfg.grid, d))
        nn.init.normal_(self.pos_emb, std=0.02)
        self.blocks = nn.ModuleList(Block(d, cfg.heads) for _ in range(cfg.layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, cfg.codes)

    def embed_image(self, codes: torch.Tensor, img_pos: torch.Tensor) -> torch.Tensor:
        """codes (..., N), img_pos (N,) image positions 0..grid^2-1 -> (..., N, dim) input embeddings."""
        g = self.cfg.grid
        return (self.img_emb(codes) + self.pos_emb[CAPTION_LEN + img_pos]
                + self.row_emb[img_pos // g] + self.col_emb[img_pos % g])

    def embed_caption(self, caption: torch.Tensor) -> torch.Tensor:
        return self.cap_emb(caption) + self.pos_emb[:CAPTION_LEN]

    def forward(self, caption: torch.Tensor, codes: torch.Tensor):
        """Teacher forcing. caption (B, 5), codes (B, G*G) -> logits (B, G*G, codes) for every image position,
        hidden (B, G*G, dim): the final-norm state that predicts each image position."""
        n_img = codes.shape[1]
        pos = torch.arange(n_img - 1, device=codes.device)
        x = torch.cat([self.embed_caption(caption), self.embed_image(codes[:, :-1], pos)], 1)  # (B, 5+N-1, d)
        for blk in self.blocks:
            x = blk(x)
        h = self.ln_f(x[:, CAPTION_LEN - 1:])                                  # (B, N, d)
        return self.head(h), h

    def attend(self, x: torch.Tensor, mask: torch.Tensor, kv: list, start: int) -> torch.Tensor:
        """Cached forward of input embeddings x (B, N, d) -> final hidden (B, N, d)."""
        for blk, cache in zip(self.blocks, kv):
            x = blk(x, mask, cache, start)
        return self.ln_f(x)

    def new_cache(self, batch: int, device=None, dtype=torch.float32, scratch: int = 160) -> list:
        c = self.cfg
        shape = (batch, c.heads, c.seq_len + scratch, c.dim // c.heads)        # + room for a tree or window tail
        return [(torch.zeros(shape, device=device, dtype=dtype), torch.zeros(shape, device=device, dtype=dtype))
                for _ in range(c.layers)]
