"""A zero-cost target for measuring the engine's own work (scripts/engine_bench.py, tests/engine/test_host_syncs.py).

`StubTarget` offers the model boundary (engine/target.py) at any vocabulary and grid, but its forward is a table
lookup: row i of the logits is one of `rows` precomputed (V,) rows, picked by (token, position) of the fed token, so
the target is a fixed Markov chain over (token, position) and every method's verification is as it is on a real
model. `forward` adds the CPU seconds it spends (time.thread_time) to `spent`, for a caller to subtract.
`StubTreeDrafter` is a tree drafter (drafters/protocols.TreeDrafter) that proposes the stub's own top tokens as
point masses (an EAGLE-2 tree with a perfect head), with no model work.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from specviz.engine.drafters.draft_tree import DraftTree
from specviz.engine.drafters.protocols import DrafterFactory
from specviz.engine.target import Prefilled


@dataclass
class StubState:
    pending: int = 0


class StubTarget:
    """A table-lookup target of `vocab` codes on a grid (H, W); `sharpness` scales the standard-normal logits."""

    def __init__(self, vocab: int, grid: tuple[int, int], rows: int = 64, hidden: int = 16, dims: int = 8,
                 seed: int = 0, sharpness: float = 3.0, device: str = "cpu"):
        g = torch.Generator().manual_seed(seed)
        self.name, self.grid, self.codebook_size, self.hidden_size = "stub", tuple(grid), vocab, hidden
        self.rows = rows
        self.table = (torch.randn(rows, vocab, generator=g) * sharpness).to(device)
        self.hidden = torch.randn(rows, hidden, generator=g).to(device)
        self.vectors = torch.randn(vocab, dims, generator=g)
        self.embed = torch.randn(vocab, hidden, generator=g)
        self.spent = 0.0                        # seconds spent in prefill / forward, for the caller to subtract

    def _rows(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return (tokens * 7919 + positions * 104729 + 1) % self.rows

    def prefill(self, prompt: str, cfg_scale: float) -> Prefilled:
        return Prefilled(StubState(), self.table[0], self.hidden[0])

    def forward(self, state: StubState, tokens: torch.Tensor, positions: torch.Tensor,
                tree_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        t0 = time.thread_time()
        if state.pending:
            raise RuntimeError("commit() must follow every forward() before the next forward()")
        rows = self._rows(tokens.to(self.table.device), positions.to(self.table.device))
        state.pending = len(tokens)
        out = self.table[rows], self.hidden[rows]
        self.spent += time.thread_time() - t0
        return out

    def commit(self, state: StubState, kept: torch.Tensor) -> None:
        state.pending = 0

    def code_vectors(self) -> torch.Tensor:
        return self.vectors

    def embed_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.embed[tokens]

    def output_head(self, hidden: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("the stub target has no output head: use StubTreeDrafter")

    def decode_image(self, tokens: torch.Tensor):
        raise NotImplementedError("the stub target draws no images")


class StubTreeDrafter:
    """Breadth-first tree of the stub's top `tree_topk` tokens under each of the first `tree_topk` nodes of a level,
    `tree_depth` levels, at most `tree_nodes` nodes below the root; point masses."""

    def __init__(self, model: StubTarget, cfg, gen: torch.Generator | None = None):
        self.model, self.cfg = model, cfg
        self.n_pos = model.grid[0] * model.grid[1]
        width = min(cfg.tree_topk, model.codebook_size)
        self.top = model.table.topk(width, -1).indices.cpu().tolist()          # (rows, width), once per run

    def observe(self, tokens, positions, features=None) -> None:
        pass

    def build(self, root_token: int, root_pos: int) -> DraftTree:
        c = self.cfg
        tokens, parents, depths = [root_token], [-1], [0]
        frontier = [0]
        for depth in range(1, c.tree_depth + 1):
            if root_pos + depth >= self.n_pos:
                break
            new = []
            for par in frontier:
                row = (tokens[par] * 7919 + (root_pos + depth - 1) * 104729 + 1) % self.model.rows
                for tok in self.top[row]:
                    if len(tokens) > c.tree_nodes:
                        break
                    tokens.append(tok), parents.append(par), depths.append(depth)
                    new.append(len(tokens) - 1)
            frontier = new[:c.tree_topk]
        return DraftTree(tokens, parents, depths, [None] * len(tokens))


# the stub target's DrafterFactory: (model, cfg, rnd) -> StubTreeDrafter
stub_factory = DrafterFactory(StubTreeDrafter, "the stub's own top tokens")
