"""LlamaGen's text-to-image GPT as a plain torch module (our own code; the procedure follows FoundationVision/LlamaGen
`autoregressive/models/gpt.py`, see docs/gpu.md "LlamaGen"). Parameter names equal the released checkpoints' keys,
so a converted state dict loads with `load_state_dict(strict=True)`.

Facts carried over from the reference (t2i, eval mode):
- LLaMA blocks: RMSNorm (computed in float32, cast back, times weight), fused `wqkv` (q: dim, k/v: n_kv_head * hd),
  SwiGLU FFN w2(silu(w1 x) * w3 x) with hidden = find_multiple(int(2 * 4 * dim / 3) [* ffn_dim_multiplier], 256).
- The condition is `cls_token_num` (120) caption vectors of `caption_dim` (2048, FLAN-T5-XL) projected by
  `cap_proj` = fc2(gelu_tanh(fc1(x))), no biases; the unconditional row feeds the learned `uncond_embedding` instead.
- 2D RoPE on interleaved pairs: with hd = dim / n_head and f_k = base^(-2k / (hd/2)), k < hd/4, pair k turns by
  row * f_k and pair hd/4 + k by col * f_k. The caption positions carry an all-zero table (cos = sin = 0), so their
  queries and keys are zero vectors: exactly what the reference computes.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from specviz.models.base import write_kv

FAMILY = "llamagen"                    # config.json "family" of a converted directory
T5_HUB = "google/flan-t5-xl"          # the text encoder the released t2i models use

GPT_SHAPES = {          # released GPT sizes (reference gpt.py): name -> (n_layer, n_head, dim)
    "GPT-B": (12, 12, 768), "GPT-L": (24, 16, 1024), "GPT-XL": (36, 20, 1280), "GPT-XXL": (48, 24, 1536),
    "GPT-XXXL": (48, 40, 2560), "GPT-1B": (22, 32, 2048), "GPT-3B": (24, 32, 3200), "GPT-7B": (32, 32, 4096)}


@dataclass
class GPTConfig:
    dim: int = 1280
    n_layer: int = 36
    n_head: int = 20
    n_kv_head: int | None = None
    ffn_hidden: int = 3584
    rope_base: float = 10000.0
    norm_eps: float = 1e-5
    vocab_size: int = 16384
    cls_token_num: int = 120
    caption_dim: int = 2048
    grid: int = 16                    # image tokens per side (block_size = grid ** 2)

    @property
    def head_dim(self) -> int:
        return self.dim // self.n_head

    @property
    def kv_heads(self) -> int:
        return self.n_kv_head or self.n_head

    def to_dict(self) -> dict:
        return asdict(self)


def ffn_hidden(dim: int, multiplier: float | None = None, multiple_of: int = 256) -> int:
    """The reference's SwiGLU width for a model dimension."""
    h = int(2 * 4 * dim / 3)
    if multiplier is not None:
        h = int(multiplier * h)
    return h if h % multiple_of == 0 else h + multiple_of - h % multiple_of


def rope_table(cfg: GPTConfig) -> torch.Tensor:
    """(cls_token_num + grid^2, hd/2, 2) float32 (cos, sin): zeros for caption positions, then raster image cells."""
    half = cfg.head_dim // 2
    freqs = 1.0 / (cfg.rope_base ** (torch.arange(0, half, 2)[: half // 2].float() / half))       # (hd/4,)
    ang = torch.outer(torch.arange(cfg.grid), freqs)                                               # (g, hd/4)
    rows = ang[:, None, :].expand(-1, cfg.grid, -1)
    cols = ang[None, :, :].expand(cfg.grid, -1, -1)
    grid = torch.cat([rows, cols], dim=-1).flatten(0, 1)                                           # (g*g, hd/2)
    table = torch.stack([torch.cos(grid), torch.sin(grid)], dim=-1)
    return torch.cat([torch.zeros(cfg.cls_token_num, half, 2), table])


def rotate(x: torch.Tensor, cs: torch.Tensor) -> torch.Tensor:
    """x (B, N, H, hd), cs (N, hd/2, 2): rotate interleaved pairs in float32, cast back."""
    p = x.float().reshape(*x.shape[:-1], -1, 2)
    c, s = cs[None, :, None, :, 0], cs[None, :, None, :, 1]
    out = torch.stack([p[..., 0] * c - p[..., 1] * s, p[..., 1] * c + p[..., 0] * s], dim=-1)
    return out.flatten(3).type_as(x)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


class CapProj(nn.Module):
    def __init__(self, cin: int, dim: int):
        super().__init__()
        self.fc1 = nn.Linear(cin, dim, bias=False)
        self.fc2 = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))


class CaptionEmbedder(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cap_proj = CapProj(cfg.caption_dim, cfg.dim)
        self.register_buffer("uncond_embedding", torch.zeros(cfg.cls_token_num, cfg.caption_dim))


class Attention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.wqkv = nn.Linear(cfg.dim, (cfg.n_head + 2 * cfg.kv_heads) * cfg.head_dim, bias=False)
        self.wo = nn.Linear(cfg.dim, cfg.dim, bias=False)

    def forward(self, x, cs, cache, start: int, mask):
        """x (B, N, dim); writes K/V into cache (k, v: (B, kvH, cap, hd)) at [start, start + N) (`start` an int, or
        the N rows as a tensor: an index copy) and attends over the first mask.shape[-1] rows under mask
        (B|1, 1, N, start + N or cap) bool."""
        c = self.cfg
        b, n, _ = x.shape
        kv = c.kv_heads * c.head_dim
        q, k, v = self.wqkv(x).split([c.dim, kv, kv], dim=-1)
        q = rotate(q.view(b, n, c.n_head, c.head_dim), cs).transpose(1, 2)
        k = rotate(k.view(b, n, c.kv_heads, c.head_dim), cs).transpose(1, 2)
        v = v.view(b, n, c.kv_heads, c.head_dim).transpose(1, 2)
        write_kv(cache, start, k, v)
        kc, vc = cache
        keys, vals = kc[:, :, :mask.shape[-1]], vc[:, :, :mask.shape[-1]]
        rep = c.n_head // c.kv_heads
        if rep > 1:
            keys, vals = keys.repeat_interleave(rep, dim=1), vals.repeat_interleave(rep, dim=1)
        out = F.scaled_dot_product_attention(q, keys, vals, attn_mask=mask)
        return self.wo(out.transpose(1, 2).reshape(b, n, c.dim))


class FeedForward(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.w1 = nn.Linear(cfg.dim, cfg.ffn_hidden, bias=False)
        self.w3 = nn.Linear(cfg.dim, cfg.ffn_hidden, bias=False)
        self.w2 = nn.Linear(cfg.ffn_hidden, cfg.dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.attention = Attention(cfg)
        self.feed_forward = FeedForward(cfg)
        self.attention_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.norm_eps)

    def forward(self, x, cs, cache, start, mask):
        h = x + self.attention(self.attention_norm(x), cs, cache, start, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class LlamaGenGPT(nn.Module):
    """Embeddings in, final-norm hidden states out; the KV cache is owned by the caller (see `new_cache`)."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.cls_embedding = CaptionEmbedder(cfg)
        self.tok_embeddings = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.output = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        with torch.device("cpu"):        # float32 on the CPU even when built on `meta`; moved on first use
            self.rope = rope_table(cfg)  # (not a buffer: a dtype cast of the module must not touch it)

    def new_cache(self, rows: int, capacity: int) -> list:
        c, p = self.cfg, self.tok_embeddings.weight
        shape = (rows, c.kv_heads, capacity, c.head_dim)
        return [(p.new_zeros(shape), p.new_zeros(shape)) for _ in range(c.n_layer)]

    def caption_rows(self, caption: torch.Tensor, uncond: bool) -> torch.Tensor:
        """caption (T, caption_dim) -> (1 or 2, T, dim) projected condition rows (cond[, uncond])."""
        w = self.cls_embedding.cap_proj.fc1.weight
        rows = [caption.to(w)] + ([self.cls_embedding.uncond_embedding.to(w)] if uncond else [])
        return self.cls_embedding.cap_proj(torch.stack(rows))

    def run(self, x: torch.Tensor, seq_pos: torch.Tensor, cache: list, start: int, mask: torch.Tensor):
        """x (B, N, dim) at sequence positions seq_pos (N,) (caption 0..T-1, image cell i at T + i) -> (B, N, dim)
        final-norm hidden; K/V written to cache rows [start, start + N) (or the rows of a `start` tensor)."""
        if self.rope.device != x.device:
            self.rope = self.rope.to(x.device)
        cs = self.rope[seq_pos.to(x.device)]
        for layer, kv in zip(self.layers, cache):
            x = layer(x, cs, kv, start, mask)
        return self.norm(x)
