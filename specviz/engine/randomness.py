"""A run's randomness, chosen once from its config (`choose`): the papers' (one CPU generator seeded from cfg.seed,
consumed in each method's own order: today's streams, draw for draw) or the keyed one (docs/methods.md §9: every
number a function of (seed, position, purpose), core/noise.py). Both answer the same calls, so the families and the
drafters ask the run's object and never which noise it is: the target's samples (`first`, `draw`), Jacobi's fresh
and refined drafts, a tree's sampled children, SJD-PAC's candidates, and the verification of a chain or a tree.
"""
from __future__ import annotations

import torch

from specviz.core import noise as keyed_noise
from specviz.core.sampling import sample
from specviz.engine.drafters import jacobi, pac
from specviz.engine.keyed import keyed_chain, keyed_tree
from specviz.engine.treewalk import verify_tree
from specviz.engine.verify import verify_chain


class Papers:
    """The papers' noise: one torch.Generator, consumed in each method's own order."""
    promises = True               # the papers' bounds (a method's `bound`) are about these draws
    record: dict = {}             # what the trace's config says about the reading (nothing: the default noise)

    def __init__(self, seed: int, vocab: int):
        self.gen, self.vocab = torch.Generator().manual_seed(seed), vocab

    def first(self, q0: torch.Tensor) -> int:
        """The first token: a draw from q0 (V,)."""
        return int(sample(q0, self.gen))

    def draw(self, pos: int, q: torch.Tensor) -> torch.Tensor:
        """One draw per row of q (k, V) at positions pos, pos + 1, ...: (k,) long where q lives."""
        return sample(q, self.gen)

    def fresh(self, pos: int) -> torch.Tensor:
        """A fresh Jacobi draft at pos: a uniform code, 0-d long."""
        return torch.randint(self.vocab, (1,), generator=self.gen)[0]

    def refine(self, pos: int, rest: torch.Tensor, old: torch.Tensor, old_laws, couple: bool) -> torch.Tensor:
        """Jacobi's refined drafts at positions pos, ... from their new laws rest (k, V): sampled, or (couple) each
        slot that held a draft old[i] with law old_laws() rows maximally coupled with it (MC-SJD)."""
        if couple and len(old):
            coupled = jacobi.coupled_draw(old, old_laws(), rest[:len(old)], self.gen)
            return torch.cat([coupled, sample(rest[len(old):], self.gen)])
        return sample(rest, self.gen)

    def children(self, pos: int, law: torch.Tensor, k: int) -> list[int]:
        """k draws without replacement from law (V,) (at most its support), one multinomial draw at a time."""
        law, out = law.clone(), []
        for _ in range(min(k, int((law > 0).sum()))):
            out.append(int(torch.multinomial(law, 1, generator=self.gen)))
            law[out[-1]] = 0
        return out

    def candidate_levels(self, pos: int, carries: list, uniform: torch.Tensor, widths: list) -> list:
        """SJD-PAC's candidates and their (marginal) laws at positions pos, pos + 1, ...: at each, candidate 0 coupled
        with the carried draft carries[d] (or drawn from the stale or uniform law), then widths[d] - 1 without
        replacement; all levels in one read, the draws in today's order (pac.papers_levels)."""
        return pac.papers_levels(carries, uniform, widths, self.gen)

    def chain(self, q, p, x, accept_fn, n: int, bonus_ok: bool, tokens, lossless: bool):
        """verify.verify_chain (lazy) of drafts x at positions n, n + 1, ..."""
        return verify_chain(q, p, x, accept_fn, self.gen, bonus_ok, lazy=True)

    def tree(self, tree, q, accept_fn, root_pos: int, group_fn, budget: float, bonus_ok, norm: str = "raw",
             reads: int = 2):
        """treewalk.verify_tree of a tree rooted at root_pos (`norm`: the run's entropy normalisation; `reads`: at
        most how many reads the walk may take without a budget, levelpack.Ahead)."""
        return verify_tree(tree, q, accept_fn, self.gen, group_fn, budget, bonus_ok, norm, reads)

    def target_sample(self, token: int) -> int | None:
        """A sampled token's `target_sample` field: absent (the papers' draws are no race)."""
        return None


class Keyed:
    """The keyed noise (core/noise.py's reading `version`): the target's sample at a position is the race of its law
    there, and every draft races the same noise."""
    promises = False              # the papers' promises are about their own rules (docs §9)

    def __init__(self, seed: int, vocab: int, version: int = keyed_noise.VERSION):
        self.noise = keyed_noise.READINGS[version](seed, vocab)
        self.vocab, self.record = vocab, {"noise_version": version}

    def first(self, q0):
        return self.noise.race(0, q0)

    def draw(self, pos, q):
        return self.noise.races(pos, q)

    def fresh(self, pos):
        return self.noise.fresh_t(pos)

    def refine(self, pos, rest, old, old_laws, couple):
        return self.noise.races(pos, rest)          # stable across refinements without a coupling (docs §9)

    def children(self, pos, law, k):
        return self.noise.order(pos, law, k)

    def candidate_levels(self, pos, carries, uniform, widths):
        laws = [uniform if c is None or c.law is None else c.law for c in carries]
        return list(zip(self.noise.orders(pos, torch.stack(laws), widths), laws)) if laws else []

    def chain(self, q, p, x, accept_fn, n, bonus_ok, tokens, lossless):
        return keyed_chain(q, p, x, accept_fn, self.noise, n, bonus_ok, lazy=True, tokens=tokens, lossless=lossless)

    def tree(self, tree, q, accept_fn, root_pos, group_fn, budget, bonus_ok, norm="raw", reads=2):
        return keyed_tree(tree, q, accept_fn, self.noise, root_pos, group_fn, budget, bonus_ok, norm, reads)

    def target_sample(self, token):
        return token                                 # the race's x*


KINDS = {"papers": Papers, "keyed": Keyed}          # the noise knob's value -> its randomness


def choose(cfg, vocab: int) -> Papers | Keyed:
    """The run's randomness, once, from cfg.noise and cfg.seed (vocab: the target's codebook size)."""
    return KINDS[cfg.noise](cfg.seed, vocab)


def of_config(config: dict) -> type:
    """The randomness class a trace's config ran with (its `promises`: whether the papers' bounds apply)."""
    return KINDS[config.get("noise", "papers")]
