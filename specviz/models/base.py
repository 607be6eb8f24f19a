"""The model boundary (docs/design.md §2): every backend offers this surface to the decoding loop.

Conventions
- Image positions are 0..H*W-1 in raster order. `forward` feeds image tokens at given positions; row i of the
  returned logits is the target's next-token law *after* consuming tokens[i], i.e. for the position that follows
  tokens[i] in its own path. `Prefilled.logits` is the law for position 0.
- The committed KV rows are never touched by `forward`: new tokens go to a scratch region after them and become
  part of the cache only through `commit(state, kept)`, which keeps the listed scratch rows (a root-to-node path,
  in order). Rejection therefore can never corrupt later steps. Every `forward` is followed by exactly one
  `commit` (possibly with an empty `kept`) before the next `forward`, so a backend may also append the scratch rows
  to a growing cache in `forward` and compact/crop them in `commit`.
- Logits are float32, CFG already mixed (u + s (c - u)); temperature / top-k / top-p belong to the sampler.
- Hidden states are the final-norm states of the conditional row, one per fed token.
- Beyond the boundary a backend may offer capabilities, asked of the model and never of its name: `eagle_head()`
  (its own trained EAGLE head for the tree drafters, engine/drafters/protocols.OffersEagleHead; models/scenes.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import torch
from PIL import Image


@dataclass
class Prefilled:
    """What prefill returns: the backend's decoding state plus the law of the first image position."""
    state: Any
    logits: torch.Tensor        # (V,) float32, guided
    hidden: torch.Tensor        # (h,) float32


class Model(Protocol):
    name: str
    grid: tuple[int, int]       # (H, W) of the token grid
    codebook_size: int
    hidden_size: int

    def prefill(self, prompt: str, cfg_scale: float) -> Prefilled: ...

    def forward(self, state: Any, tokens: torch.Tensor, positions: torch.Tensor,
                tree_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """tokens (N,) long, positions (N,) long, tree_mask (N, N) bool (row i sees column j; None = causal chain)
        -> logits (N, V) float32 guided, hidden (N, h) float32."""
        ...

    def commit(self, state: Any, kept: torch.Tensor) -> None:
        """Append the scratch rows `kept` (indices into the last forward's tokens, a path in order) to the cache."""
        ...

    def code_vectors(self) -> torch.Tensor:
        """(V, d) codebook vectors in the decoder's geometry (LANTERN / GSD distances)."""
        ...

    def decode_image(self, tokens: torch.Tensor) -> Image.Image:
        """(H*W,) codes in raster order -> RGB image."""
        ...

    def embed_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        """(N,) codes -> (N, h) the target's own input embeddings (for drafter heads)."""
        ...

    def output_head(self, hidden: torch.Tensor) -> torch.Tensor:
        """(..., h) -> (..., V) the target's frozen image head (EAGLE drafters reuse it), float32."""
        ...


def compact_path(caches, t: int, kept: torch.Tensor, device) -> None:
    """After a tree forward whose scratch rows start at cache position t: move the kept rows (a path, in order) to
    t, t + 1, ... in every (keys, values) pair of `caches` (B, heads, positions, dim). A chain (kept = 0..k-1) is
    already in place."""
    k = kept.numel()
    if k and not torch.equal(kept, torch.arange(k)):
        src = (t + kept).to(device)
        for keys, values in caches:
            keys[:, :, t:t + k] = keys[:, :, src]
            values[:, :, t:t + k] = values[:, :, src]


def kept_rows(kept, pending: int) -> torch.Tensor:
    """`commit`'s `kept` as a 1-D long CPU tensor, checked against the last forward's `pending` scratch rows."""
    kept = torch.as_tensor(kept, dtype=torch.long).view(-1).cpu()
    if kept.numel() > pending or (kept.numel() and (kept.min() < 0 or kept.max() >= pending)):
        raise IndexError(f"kept rows {kept.tolist()} out of range for a forward of {pending} tokens")
    return kept


def guide(logits: torch.Tensor, rows: int, scale: float) -> torch.Tensor:
    """Classifier-free guidance, the one definition every backend uses: logits (rows, N, V) with row 0 conditional
    and row 1 unconditional -> u + scale * (c - u) (N, V); with one row (no guidance) row 0 as it is."""
    return logits[1] + scale * (logits[0] - logits[1]) if rows == 2 else logits[0]
