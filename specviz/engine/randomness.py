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
from specviz.engine.levelpack import uniform_offsets
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
        """k draws without replacement from law (V,) (at most its support), one multinomial draw at a time, on the
        host where the generator is (a copy of the law: one read, as each drawn token is)."""
        law, out = law.to("cpu", copy=True), []
        for _ in range(min(k, int((law > 0).sum()))):
            out.append(int(torch.multinomial(law, 1, generator=self.gen)))
            law[out[-1]] = 0
        return out

    def candidate_levels(self, pos: int, carries: list, uniform: torch.Tensor, widths: list) -> list:
        """SJD-PAC's candidates and their (marginal) laws at positions pos, pos + 1, ...: at each, candidate 0 coupled
        with the carried draft carries[d] (or drawn from the stale or uniform law), then widths[d] - 1 without
        replacement; all levels in one read, the draws in today's order (pac.papers_levels)."""
        return pac.papers_levels(carries, uniform, widths, self.gen)

    def candidates_ahead(self, tree) -> "PapersAhead":
        """SJD-PAC's next candidates for every end of the walk of `tree` about to start (pac.LevelsAhead)."""
        return PapersAhead(self.gen, tree)

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
        laws = pac.carried_laws(carries, uniform)
        return list(zip(self.noise.orders(pos, torch.stack(laws), widths), laws)) if laws else []

    def candidates_ahead(self, tree):
        return KeyedAhead(self.noise)

    def chain(self, q, p, x, accept_fn, n, bonus_ok, tokens, lossless):
        return keyed_chain(q, p, x, accept_fn, self.noise, n, bonus_ok, lazy=True, tokens=tokens, lossless=lossless)

    def tree(self, tree, q, accept_fn, root_pos, group_fn, budget, bonus_ok, norm="raw", reads=2):
        return keyed_tree(tree, q, accept_fn, self.noise, root_pos, group_fn, budget, bonus_ok, norm, reads)

    def target_sample(self, token):
        return token                                 # the race's x*


class PapersAhead:
    """The papers' stream of SJD-PAC's next candidates, for a walk (treewalk.verify_tree) about to start: the walk
    ending at node v has used `walked(v)` uniforms, and the next propose's draw from there on (pac.levels_t) with the
    uniforms it needs. The stream is drawn once here, the generator rewound (the walk, then `levels_of`, advance it
    by what they use)."""

    def __init__(self, gen: torch.Generator, tree):
        self.gen, self.tree, self.off = gen, tree, uniform_offsets(tree)
        self.state, self.stream = gen.get_state(), torch.zeros(0)

    def walked(self, v: int) -> int:
        """Uniforms the walk uses when it ends at v: v's level rejects every kid (its kids + 1: the resample's), or v
        is a leaf accepted with a bonus token (its own + 1)."""
        kids = self.tree.children[v]
        return self.off[v] + (len(kids) if kids else 0) + 1

    def levels_t(self, v: int, pos: int, carries: list, uniform: torch.Tensor, widths: list) -> torch.Tensor:
        return self.levels_ends([(v, pos, carries, widths)], uniform)[0]

    def levels_ends(self, jobs: list, uniform: torch.Tensor) -> tuple[torch.Tensor, list]:
        """levels_t of several ends [(v, pos, carries, widths)] at once (pac.levels_rows): their vectors one after
        another, and each one's size."""
        starts = [self.walked(v) for v, *_ in jobs]
        end = max(s + sum(pac.uniforms_needed(c, w) for c, w in zip(cs, ws)) for s, (_, _, cs, ws) in zip(starts, jobs))
        if len(self.stream) < end:                        # drawn once a step at the longest end asked for so far
            now = self.gen.get_state()
            self.gen.set_state(self.state)
            self.stream = torch.rand(end, generator=self.gen)
            self.gen.set_state(now)
        return pac.levels_rows([(cs, ws, s) for s, (_, _, cs, ws) in zip(starts, jobs)], uniform, self.stream), \
            [1 + sum(ws) for *_, ws in jobs]

    def levels_of(self, vals: list, pos: int, carries: list, uniform: torch.Tensor, widths: list) -> list:
        """levels_t's values read back, once the walk has ended at its v: the generator advanced by what they used."""
        return pac.levels_of(vals, carries, uniform, widths, self.gen)


class KeyedAhead:
    """The keyed SJD-PAC's next candidates (Noise.orders_t at the next position), for any end of a walk."""

    def __init__(self, noise):
        self.noise = noise

    def levels_t(self, v, pos, carries, uniform, widths):
        return self.noise.orders_t(pos, torch.stack(pac.carried_laws(carries, uniform)), widths)

    def levels_ends(self, jobs, uniform):
        parts = [self.levels_t(v, pos, carries, uniform, widths).reshape(-1) for v, pos, carries, widths in jobs]
        return torch.cat(parts), [t.numel() for t in parts]

    def levels_of(self, vals, pos, carries, uniform, widths):
        return list(zip(keyed_noise.orders_of(vals, widths), pac.carried_laws(carries, uniform)))


KINDS = {"papers": Papers, "keyed": Keyed}          # the noise knob's value -> its randomness


def choose(cfg, vocab: int) -> Papers | Keyed:
    """The run's randomness, once, from cfg.noise and cfg.seed (vocab: the target's codebook size)."""
    return KINDS[cfg.noise](cfg.seed, vocab)


def of_config(config: dict) -> type:
    """The randomness class a trace's config ran with (its `promises`: whether the papers' bounds apply)."""
    return KINDS[config.get("noise", "papers")]
