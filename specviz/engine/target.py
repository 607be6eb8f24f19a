"""What the decoding loop asks of a model backend (docs/design.md §2), declared by the loop that uses it: the
`Model` boundary and the `Prefilled` record its prefill returns. The conventions (positions, scratch rows, guided
logits) are models/base.py's docstring; every backend in specviz/models/ offers this surface."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import torch

if TYPE_CHECKING:                                   # annotations only: decode_image returns a PIL image
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
