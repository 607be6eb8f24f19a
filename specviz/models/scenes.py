"""The embedded `scenes` backend: the trained Target + VQ decoder behind the model boundary (models/base.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from specviz.core.paths import assets_dir
from specviz.engine.target import Prefilled
from specviz.models.base import (
    SCRATCH,
    bucket,
    compact_path,
    compiled,
    exact,
    guide,
    mark_static,
    padded_inner,
    static_mask,
)
from specviz.scenes import data
from specviz.scenes.drafter import load_head
from specviz.scenes.target import Target, TargetConfig
from specviz.scenes.train import load_target, load_vq
from specviz.scenes.vq import to_uint8

ASSETS = assets_dir()
HEAD = ASSETS / "drafter.safetensors"           # the trained EAGLE head of the shipped target


@dataclass
class ScenesState:
    kv: list                    # per layer (k, v), each (B, heads, Tmax, dh); B = 2 with CFG (cond, uncond), else 1
    length: int                 # committed rows
    cfg_scale: float
    rows: int = field(default=1)


class ScenesModel:
    """Model boundary over a `Target` (and optionally a VQ decoder for pixels). head: the file of the target's
    trained EAGLE head, offered to the tree drafters by `eagle_head` (None: this target has none, e.g. `tiny`)."""

    def __init__(self, target: Target, vq=None, name: str = "scenes", head: Path | str | None = HEAD):
        self.target = target.eval()
        self.vq = vq.eval() if vq is not None else None
        self.name = name
        self.head_path, self._head = head, None
        c: TargetConfig = target.cfg
        self.grid = (c.grid, c.grid)
        self.codebook_size = c.codes
        self.hidden_size = c.dim
        self._tril = torch.ones(256, 256, dtype=torch.bool).tril()
        self._attend = self.target.attend                  # the verification forward: torch.compile'd by compile()
        self.compiled, self.rows_for = False, exact         # eager: forwards of their own row count

    def compile(self) -> "ScenesModel":
        """Capture the fixed-shape verification forward with torch.compile (mode reduce-overhead: CUDA graphs on
        CUDA); refuses in one line where inductor cannot compile (base.compiled)."""
        self._attend, self.compiled, self.rows_for = compiled(self.target.attend), True, bucket
        return self

    @classmethod
    def load(cls, assets: Path | str = ASSETS) -> "ScenesModel":
        assets = Path(assets)
        missing = [n for n in ("target.safetensors", "vq.safetensors") if not (assets / n).exists()]
        if missing:
            raise FileNotFoundError(f"{', '.join(missing)} not found in {assets}; "
                                    "train them with `python -m specviz train all`")
        return cls(load_target(assets / "target.safetensors"), load_vq(assets / "vq.safetensors"))

    def eagle_head(self):
        """Capability (drafters.protocols.OffersEagleHead): the target's trained EAGLE head, loaded once; None when
        it has none or its file is absent."""
        if self._head is None and self.head_path is not None and Path(self.head_path).exists():
            self._head = load_head(self.target, self.head_path)
        return self._head

    # -- boundary -------------------------------------------------------------------------------------------------
    @torch.inference_mode()
    def prefill(self, prompt: str | list[int], cfg_scale: float) -> Prefilled:
        cap = data.parse_prompt(prompt) if isinstance(prompt, str) else list(prompt)
        rows = [cap] if cfg_scale == 1.0 else [cap, data.null_tokens()]
        caption = torch.tensor(rows)
        state = ScenesState(self.target.new_cache(len(rows), scratch=SCRATCH), 0, float(cfg_scale), len(rows))
        if self.compiled:
            mark_static(state.kv)
        n = caption.shape[1]
        cap = state.kv[0][0].shape[2]
        mask = static_mask(torch.zeros(0, dtype=torch.bool), self._tril[:n, :n], cap if self.compiled else n)
        h = self.target.attend(self.target.embed_caption(caption), mask, state.kv, torch.arange(n))
        state.length = n
        logits, hidden = self._out(h[:, -1:], state)
        return Prefilled(state, logits[0], hidden[0])

    @torch.inference_mode()
    def forward(self, state: ScenesState, tokens: torch.Tensor, positions: torch.Tensor,
                tree_mask: torch.Tensor | None = None):
        n, t = len(tokens), state.length
        m = self.rows_for(n)                                  # compiled: padded, one shape per bucket
        inner = self._tril[:n, :n] if tree_mask is None else torch.as_tensor(tree_mask).bool()
        width = state.kv[0][0].shape[2] if self.compiled else t + m     # eager: the rows in use (the old sums)
        mask = static_mask(torch.ones(t, dtype=torch.bool), padded_inner(inner, m), width)
        toks, pos = torch.zeros(m, dtype=torch.long), torch.zeros(m, dtype=torch.long)
        toks[:n], pos[:n] = torch.as_tensor(tokens).long(), torch.as_tensor(positions).long()
        x = self.target.embed_image(toks, pos).unsqueeze(0).expand(state.rows, -1, -1)
        h = self._attend(x, mask, state.kv, torch.arange(t, t + m))                      # (rows, M, d)
        return self._out(h[:, :n], state)

    @torch.inference_mode()
    def commit(self, state: ScenesState, kept: torch.Tensor) -> None:
        compact_path(state.kv, state.length, kept, "cpu")                                # a tree path: compact
        state.length += len(kept)

    def _out(self, h: torch.Tensor, state: ScenesState):
        logits = self.target.head(h).float()                                              # (rows, N, V)
        return guide(logits, state.rows, state.cfg_scale), h[0].float()

    # -- extras for drafters, rules and rendering -----------------------------------------------------------------
    def code_vectors(self) -> torch.Tensor:
        if self.vq is not None:
            return self.vq.code_vectors().detach()
        return torch.nn.functional.normalize(self.target.img_emb.weight.detach(), dim=1)

    @torch.inference_mode()
    def embed_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.target.img_emb(tokens)

    @torch.inference_mode()
    def output_head(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.target.head(hidden).float()

    @torch.inference_mode()
    def decode_image(self, tokens: torch.Tensor) -> Image.Image:
        gh, gw = self.grid
        tokens = torch.as_tensor(tokens).view(1, gh, gw)
        if self.vq is None:                                    # tiny test models: a fixed palette per code
            pal = np.random.default_rng(0).integers(0, 256, (self.codebook_size, 3), dtype=np.uint8)
            return Image.fromarray(pal[tokens[0].numpy()]).resize((gw * 4, gh * 4), Image.NEAREST)
        return Image.fromarray(to_uint8(self.vq.decode(tokens))[0].numpy())


def tiny(codes: int = 6, grid: int = 2, seed: int = 0, dim: int = 32, sharpen: float = 3.0) -> ScenesModel:
    """A tiny random target for tests (no VQ): `sharpen` scales the head so laws are peaked, not uniform."""
    torch.manual_seed(seed)
    t = Target(TargetConfig(codes=codes, grid=grid, dim=dim, layers=2, heads=2))
    for p in t.parameters():
        if p.dim() > 1:
            torch.nn.init.normal_(p, std=0.3)
    with torch.no_grad():
        t.pos_emb.normal_(0, 0.5)
        t.head.weight.mul_(sharpen)
    return ScenesModel(t, None, name="tiny", head=None)
