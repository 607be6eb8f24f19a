"""A toy target whose law at a position depends only on the tokens before it in its own row (a Markov chain per row
through the row's running sum), offering the model boundary with explicit bookkeeping of what each query sees:
the cache (committed rows) and the scratch rows its tree_mask shows, one token per position. For the wavefront
methods (zipar, pjd) the context a row lacks (the rows above) does not enter the law, so their output law must
equal AR's exactly (the chi-square tests); with `above` the law also reads the last token of the row above (undecided
while rows overlap), so missing context matters."""
from __future__ import annotations

import itertools

import torch

from specviz.engine.target import Prefilled


class RowToy:
    name = "rowtoy"
    hidden_size = 1

    def __init__(self, h: int, w: int, codes: int, seed: int = 0, scale: float = 1.0, above: bool = False):
        g = torch.Generator().manual_seed(seed)
        self.grid, self.codebook_size, self.above = (h, w), codes, above
        self.theta = torch.randn(h * w, codes, generator=g) * scale
        self.phi = torch.randn(h * w, codes, codes, generator=g) * scale      # [pos, running sum mod V, code]

    def logits(self, p: int, seen: dict) -> torch.Tensor:
        w, v = self.grid[1], self.codebook_size
        s = sum(seen.get(j, 0) for j in range(p - p % w, p))
        if self.above and p >= w:                                  # the last token of the row above
            s += seen.get(p - p % w - 1, v)                          # v (the sum's offset) when it is not seen
        return self.theta[p] + self.phi[p, s % v]

    def prefill(self, prompt, cfg_scale) -> Prefilled:
        return Prefilled({"cache": {}, "pending": None}, self.logits(0, {}), torch.zeros(1))

    def forward(self, state, tokens, positions, tree_mask=None):
        assert state["pending"] is None, "commit() must follow every forward()"
        toks, pos = torch.as_tensor(tokens).tolist(), torch.as_tensor(positions).tolist()
        n, n_pos = len(toks), self.grid[0] * self.grid[1]
        mask = torch.ones(n, n, dtype=torch.bool).tril() if tree_mask is None else tree_mask
        out = []
        for i in range(n):
            seen = dict(state["cache"])
            for j in range(n):
                if mask[i, j]:
                    assert seen.get(pos[j], toks[j]) == toks[j], f"position {pos[j]} seen with two tokens"
                    seen[pos[j]] = toks[j]
            out.append(self.logits(pos[i] + 1, seen) if pos[i] + 1 < n_pos else torch.zeros(self.codebook_size))
        state["pending"] = (toks, pos)
        return torch.stack(out), torch.zeros(n, 1)

    def commit(self, state, kept) -> None:
        toks, pos = state["pending"]
        for i in torch.as_tensor(kept).tolist():
            assert pos[i] not in state["cache"], f"position {pos[i]} committed to the cache twice"
            state["cache"][pos[i]] = toks[i]
        state["pending"] = None

    def exact_law(self) -> dict:
        """The AR joint law of the whole grid by enumeration: {tokens: probability}."""
        n = self.grid[0] * self.grid[1]
        out = {}
        for seq in itertools.product(range(self.codebook_size), repeat=n):
            seen, prob = {}, 1.0
            for p, t in enumerate(seq):
                prob *= float(torch.softmax(self.logits(p, seen), -1)[t])
                seen[p] = t
            out[seq] = prob
        return out
