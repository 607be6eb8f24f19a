"""The EAGLE-style draft head of the scenes target and its training on the target's features (docs/algorithms.md
§4.1); engine/drafters/tree.py's HeadDrafter drafts with it at run time (the scenes model offers it: eagle_head).

Input pair at step t: (y_{t+1}, f_t) -> predict f_{t+1} (SmoothL1) and y_{t+2} through the target's frozen head
(0.1 x cross-entropy); uniform noise on input features. CASCADE's drafter tweak (optional): weight positions where
consecutive target states converge, w_t = 1 + beta * 1[cos(f_t, f_{t+1}) > tau_seq].
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from specviz.core import ckpt
from specviz.scenes import loop, world
from specviz.scenes.loop import BF16, caption_batch
from specviz.scenes.target import Block
from specviz.scenes.vq import to_tensor

WORK = Path(__file__).resolve().parents[2] / ".cache" / "train"


class DraftHead(nn.Module):
    """The EAGLE head: fc([embed(y_{t+1}) + pos(t+1); f_t]), one block of the scenes target (own KV cache), a norm."""

    def __init__(self, dim: int, heads: int, positions: int):
        super().__init__()
        self.fc = nn.Linear(2 * dim, dim)
        self.pos = nn.Parameter(torch.zeros(positions, dim))
        self.block = Block(dim, heads)
        self.norm = nn.LayerNorm(dim)
        self.heads, self.positions = heads, positions

    def inputs(self, tok_emb: torch.Tensor, pos: torch.Tensor, feat: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.cat([tok_emb + self.pos[pos], feat], -1))

    def forward(self, tok_emb, pos, feat):
        """Training: (B, N, d) embeddings of y_{t+1}, positions t+1, features f_t -> predicted f_{t+1}."""
        return self.norm(self.block(self.inputs(tok_emb, pos, feat)))

    def new_cache(self, rows: int = 1):
        d = self.fc.out_features
        shape = (rows, self.heads, self.positions + 192, d // self.heads)
        dev = self.fc.weight.device                     # the cache lives with the head's weights
        return (torch.zeros(shape, device=dev), torch.zeros(shape, device=dev))


def head_for(target) -> DraftHead:
    """An untrained head shaped for a scenes `Target` (its width, heads and number of image positions)."""
    c = target.cfg
    return DraftHead(c.dim, c.heads, c.grid * c.grid)


def load_head(target, path: Path | str) -> DraftHead:
    """The trained head for `target` from a safetensors file, in eval mode."""
    head = head_for(target)
    ckpt.load(path, head)
    return head.eval()


def _pairs(target, caps, codes, bf16: bool = True):
    """Teacher-forced features: inputs (emb y_j + pos j, f before y_j) for j < N-1; targets f after y_j, y_{j+1}."""
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        _, h = target(caps, codes)                                        # h[:, j] predicts position j
    h = h.float()
    n = codes.shape[1]
    return target.img_emb(codes[:, :n - 1]).detach(), torch.arange(n - 1), h[:, :n - 1], h[:, 1:], codes[:, 1:]


def _head_loss(target, head, emb, pos, f_in, f_out, y, beta: float, tau_seq: float, bf16: bool) -> torch.Tensor:
    """One head's loss on teacher-forced features: SmoothL1 on the next feature + 0.1 x CE through the target's
    frozen head, positions weighted by 1 + beta * 1[cos(f_in, f_out) > tau_seq]."""
    with torch.autocast(**BF16, enabled=bf16):
        pred = head(emb, pos, f_in)
    pred = pred.float()
    w = torch.ones(y.shape)
    if beta > 0:
        w = w + beta * (F.cosine_similarity(f_in, f_out, dim=-1) > tau_seq).float()
    reg = (F.smooth_l1_loss(pred, f_out, reduction="none").mean(-1) * w).sum() / w.sum()
    ce = (F.cross_entropy(target.head(pred).flatten(0, 1), y.flatten(), reduction="none") * w.flatten()).sum()
    return reg + 0.1 * ce / w.sum()


def train_drafter_heads(target, pool_caps, pool_codes, steps: int, batch: int, seed: int,
                        betas: dict[str, float], tau_seq: float = 0.95, work: Path = WORK, bf16: bool = True):
    """Train one head per entry of `betas` (name -> beta) against a frozen target on (caption, codes) pools. The
    heads see the same batches and share each batch's target forward (the dominant cost); their parameters and
    losses are separate (one AdamW over both: per-parameter moments; the loop's gradient-norm clip is over both).
    Checkpoints in `work`. Returns ({name: head in eval mode}, seconds)."""
    torch.manual_seed(seed)
    heads = torch.nn.ModuleDict({name: head_for(target) for name in betas})
    for p in target.parameters():
        p.requires_grad_(False)
    opt = torch.optim.AdamW(heads.parameters(), lr=1e-3, weight_decay=0.0)
    rng = np.random.default_rng(seed)
    g = torch.Generator().manual_seed(seed)

    def step_fn(step):
        idx = torch.from_numpy(rng.integers(0, len(pool_codes), batch))
        codes = pool_codes[idx].long()
        caps = caption_batch(pool_caps[idx].numpy(), rng)
        emb, pos, f_in, f_out, y = _pairs(target, caps, codes, bf16)
        f_in = f_in + (torch.rand(f_in.shape, generator=g) - 0.5) * 0.2
        return sum(_head_loss(target, heads[n], emb, pos, f_in, f_out, y, b, tau_seq, bf16)
                   for n, b in betas.items()), {}

    secs = loop.run(work, "drafters", heads, opt, steps, 1e-3, step_fn)
    return {n: h.eval() for n, h in heads.items()}, secs


@torch.no_grad()
def agreement(target, head, vq, n: int = 200, seed: int = 4321, batch_fn=world.batch, bf16: bool = False) -> float:
    """Top-1 agreement of the head's next-token guess with the target's, teacher-forced on held-out scenes."""
    imgs, sc = batch_fn(np.random.default_rng(seed), n, held_out=True)
    codes = vq.encode(to_tensor(imgs))[0].flatten(1)
    caps = torch.tensor([s.tokens() for s in sc])
    emb, pos, f_in, f_out, _ = _pairs(target, caps, codes, bf16)
    pred = head(emb, pos, f_in)
    return float((target.head(pred).argmax(-1) == target.head(f_out).argmax(-1)).float().mean())
