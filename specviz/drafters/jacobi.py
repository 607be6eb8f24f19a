"""Jacobi window drafting (SJD, docs/algorithms.md §3): the target drafts for itself.

The window holds drafts for the next L-1 positions with their kept laws: refined slots carry the law they were
sampled from in the previous iteration (q under a partly wrong prefix); fresh slots are point masses (P2).
"""
from __future__ import annotations

import torch

from specviz.sampling import sample


class JacobiDrafter:
    def __init__(self, window: int, vocab: int, grid: tuple[int, int], init: str, gen: torch.Generator):
        self.window, self.vocab, self.grid, self.init, self.gen = window, vocab, grid, init, gen
        self.tokens: list[int] = []            # drafts for positions n, n+1, ...
        self.laws: list = []                   # per draft: (V,) law or None (point mass)

    def propose(self, committed: list[int], n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Drafts for positions n .. min(n + L - 1, H*W) - 1: tokens (k,), laws (k, V)."""
        k = min(self.window - 1, self.grid[0] * self.grid[1] - n)
        while len(self.tokens) < k:
            self.tokens.append(self._fresh(committed, n + len(self.tokens)))
            self.laws.append(None)
        del self.tokens[k:], self.laws[k:]
        x = torch.tensor(self.tokens, dtype=torch.long)
        p = torch.nn.functional.one_hot(x, self.vocab).float()
        refined = [i for i, law in enumerate(self.laws) if law is not None]
        if refined:
            p[refined] = torch.stack([self.laws[i] for i in refined])
        return x, p

    def update(self, accepted: int, q: torch.Tensor) -> None:
        """After a verification that committed `accepted` drafts plus one new token: slots beyond the new token
        take fresh samples from this forward's laws q (rows aligned with the drafts) as refined drafts."""
        start = accepted + 1
        rest = q[start:]
        if len(rest):
            self.tokens = sample(rest, self.gen).tolist()
            self.laws = list(rest)
        else:
            self.tokens, self.laws = [], []

    def _fresh(self, committed: list[int], pos: int) -> int:
        w = self.grid[1]
        if self.init == "repeat_horizon" and pos % w:
            return self._at(committed, pos - 1)
        if self.init == "repeat_vertical" and pos >= w:
            return self._at(committed, pos - w)
        return int(torch.randint(self.vocab, (1,), generator=self.gen))

    def _at(self, committed: list[int], pos: int) -> int:
        """Token at pos: committed if known, else the current draft there."""
        if pos < len(committed):
            return committed[pos]
        return self.tokens[pos - len(committed)]
