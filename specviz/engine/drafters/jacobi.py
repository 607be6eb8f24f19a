"""Jacobi window drafting (SJD, docs/algorithms.md §3): the target drafts for itself.

The window holds drafts for the next L-1 positions with their kept laws: refined slots carry the law they were
sampled from in the previous iteration (q under a partly wrong prefix); fresh slots are point masses (P2).

With `couple` on (MC-SJD, So et al. arXiv 2510.24211), a refined slot's new draft is not sampled independently from
its new law p' but maximally coupled with the slot's previous draft x ~ p (`coupling` below): the marginal is still
exactly p', so verification is unchanged and lossless, and the draft stays put with probability 1 - TV(p, p').
"""
from __future__ import annotations

import torch

from specviz.core.sampling import exact_at, point_masses, safe_norm, sample


def coupling(x: torch.Tensor, p_old: torch.Tensor, p_new: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Maximal coupling of a draft x ~ p_old with a new law p_new, as its two pure pieces.

    x (k,) previous drafts; p_old (k, V) the laws they were drawn from (one-hot rows for point masses); p_new (k, V).
    Returns keep (k,) = min(1, p_new(x) / p_old(x)) and the fallback law (k, V) = norm([p_new - p_old]+).
    The draft x' = x with probability keep, else x' ~ fallback, has marginal exactly p_new:
        P(x' = y) = min(p_old(y), p_new(y)) + [p_new(y) - p_old(y)]+ = p_new(y),
    because sum_x p_old(x) (1 - keep(x)) = sum [p_old - p_new]+ = sum [p_new - p_old]+ (the fallback's mass).
    An empty fallback (p_old = p_new: keep is 1 wherever p_old > 0) falls back to p_new (never drawn then)."""
    rows = torch.arange(len(x))
    px, qx = p_old[rows, x], p_new[rows, x]
    keep = exact_at(px, qx)
    fallback, _ = safe_norm((p_new - p_old).clamp_min_(0), p_new)          # in place: a fresh difference
    return keep, fallback


def coupled_draw(x: torch.Tensor, p_old: torch.Tensor, p_new: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Draw x' (k,) from the maximal coupling of x ~ p_old (k, V) with p_new (k, V): one uniform per slot, then one
    fallback draw per slot (drawn for every slot, used where the uniform says move), so the count is fixed."""
    keep, fallback = coupling(x, p_old, p_new)
    u = torch.rand(len(x), generator=gen).to(keep.device)
    moved = sample(fallback, gen)
    return torch.where(u < keep, x, moved)


class JacobiDrafter:
    """The window's drafts live where the target's laws do (`x`, a long tensor); the host knows their values only
    when the family hands them back after its step's one read (`settle`). Under the `random` init the fresh drafts
    of the next window are drawn at the end of `update`, where the next `propose` would draw them (nothing draws
    in between), so their values come back with that read too."""

    def __init__(self, window: int, vocab: int, grid: tuple[int, int], init: str, rnd, couple: bool = False):
        self.window, self.vocab, self.grid, self.init = window, vocab, grid, init
        self.rnd, self.couple, self.n = rnd, couple, 0        # rnd: the run's randomness (engine/randomness.py)
        self.x = torch.zeros(0, dtype=torch.long)  # drafts for positions n, n+1, ...
        self.p = torch.zeros(0, vocab)             # the refined drafts' laws (r, V): slots 0..r-1; the rest are
                                                   # point masses (fresh slots only ever follow refined ones)
        self.host: list[int] | None = []           # x's values on the host, when known
        self.laws = torch.zeros(0, vocab)          # the kept laws of x as propose() returned them (k, V)

    def propose(self, committed: list[int], n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Drafts for positions n .. min(n + L - 1, H*W) - 1: tokens (k,), laws (k, V)."""
        self.n = n
        self._fill(committed, n)
        self.laws = self._law_rows(self.x, self.p)
        return self.x, self.laws

    def known(self) -> list[int] | None:
        """The current drafts' values if the host has them (else None: the caller reads them)."""
        return self.host

    def settle(self, tokens: list[int]) -> None:
        """The family read the drafts `update` left (x) with its step's numbers: their values on the host."""
        self.host = [int(t) for t in tokens]

    def _fill(self, committed: list[int] | None, n: int) -> None:
        """Truncate or extend the window to min(L - 1, H*W - n) drafts; fresh slots are point masses (P2)."""
        k = max(0, min(self.window - 1, self.grid[0] * self.grid[1] - n))
        while len(self.x) < k:                     # one at a time: a repeat init may read the draft just made
            self.x = torch.cat([self.x, self._fresh(committed, n + len(self.x)).view(1).to(self.x.device)])
            self.host = None
        self.x, self.host = self.x[:k], (self.host[:k] if self.host is not None else None)
        self.p = self.p[:k]

    def _law_rows(self, x: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        """(k, V) kept laws of drafts x (k,) whose first len(p) slots are refined with laws p: one-hot rows after."""
        if len(p) == len(x):                       # every slot refined: p itself (no copy of its rows)
            return p.to(x.device)
        fresh = point_masses(x[len(p):], self.vocab)
        return torch.cat([p.to(fresh.device), fresh]) if len(p) else fresh

    def update(self, accepted: int, q: torch.Tensor) -> None:
        """After a verification that committed `accepted` drafts plus one new token: slots beyond the new token
        take new drafts from this forward's laws q (rows aligned with the drafts) as refined drafts: independent
        samples (SJD), or with `couple` each slot that held a draft is coupled with it (MC-SJD) and the slot past
        the old window end is sampled. Then (random init) the next window's fresh drafts."""
        start = accepted + 1
        rest = q[start:]
        self.host = None
        if not len(rest):
            self.x, self.p = torch.zeros(0, dtype=torch.long, device=q.device), q[:0]
        else:
            old, laws = self.x[start:].to(q.device), self.laws[start:]      # the rows propose() built for them
            self.x = self.rnd.refine(self.n + start, rest, old, lambda: laws.to(q.device), self.couple)
            self.p = rest
        if self.init == "random":
            self._fill(None, self.n + start)

    def _fresh(self, committed: list[int] | None, pos: int) -> torch.Tensor:
        w = self.grid[1]
        if self.init == "repeat_horizon" and pos % w:
            return self._at(committed, pos - 1)
        if self.init == "repeat_vertical" and pos >= w:
            return self._at(committed, pos - w)
        return self.rnd.fresh(pos)

    def _at(self, committed: list[int], pos: int) -> torch.Tensor:
        """Token at pos: committed if known, else the current draft there."""
        if pos < len(committed):
            return torch.tensor(committed[pos])
        return self.x[pos - len(committed)]
