"""Mutation-check variants for SJD-PAC's next candidates read with the walk (drafters/pac.LevelsAhead,
randomness.PapersAhead / KeyedAhead, levelpack.Ahead's rider) (protocol: tests/support/mutants.py): a wrong end,
stream offset, position or carry must change a run against the propose's own read, and a rider read apart or an end
left out must show as a read in tests/engine/test_host_syncs.py."""
from __future__ import annotations

import torch

from specviz.core import noise
from specviz.engine import levelpack, randomness
from specviz.engine.drafters import pac
from tests.engine.test_host_syncs import pac_reads_within_two
from tests.engine.test_pac_ahead import pac_ahead_equals_own_reads
from tests.support.mutants import Mutant


def _walked_without_the_resample(self, v):
    """Wrong: a walk that rejects every kid of v's level counted without the resampled token's uniform."""
    kids = self.tree.children[v]
    return self.off[v] + (len(kids) if kids else 1)


def _levels_of_not_advancing(self, vals, pos, carries, uniform, widths):
    """Wrong: the read-back candidates leave the generator where the walk left it (their uniforms not consumed)."""
    return pac.levels_of([0] + list(vals[1:]), carries, uniform, widths, self.gen)


def _ends_without_leaves(real):
    """Wrong: a level carries only the end at its own node (a leaf accepted with a bonus token left out)."""
    def pack(self, node):
        kids = self.tree.children[node]
        self.tree.children[node] = [c for c in kids if self.tree.children[c]]
        try:
            return real(self, node)
        finally:
            self.tree.children[node] = kids
    return pack


def _carries_from_the_level(self, node):
    """Wrong: every end decided on node's level takes the carries of a walk ending at node (a leaf kid's own chain
    not followed)."""
    ends = [node] + [c for c in self.tree.children[node] if not self.tree.children[c]]
    plans, parts = [], []
    for v in ends:
        n_next = self.n + self.tree.depths[v] + 1
        carries, widths = self.d.plan(pac.continuation(self.tree, self.d.main, [node], self.q), n_next)
        if widths:
            parts.append(self.src.levels_t(v, n_next, carries, self.d.uniform, widths).reshape(-1))
            plans.append((v, n_next, carries, widths, parts[-1].numel()))
    self.plans[node] = plans
    return torch.cat(parts).to(self.q.device, torch.float64) if parts else None


def _keyed_one_early(real):
    """Wrong: the keyed candidates raced at the position before the next step's first (the walk's new token's)."""
    def levels_t(self, v, pos, carries, uniform, widths):
        return real(self, v, pos - 1, carries, uniform, widths)
    return levels_t


def _rider_read_apart(real):
    """Wrong: the rider's numbers read on their own, not with the levels' read (a planted .tolist())."""
    def at(self, node):
        ride = self.tree.rider
        if ride is not None and node not in self.values:
            real_pack = ride.pack

            def pack(c):
                t = real_pack(c)
                if t is not None:
                    t.tolist()
                return t
            ride.pack = pack
        return real(self, node)
    return at


def _flat_rows_without_support(real):
    """Wrong: the keyed rider's flat values read back without each row's support size (a law out of mass before the
    width keeps finishers off its support)."""
    def orders_of(top, widths):
        if top and not isinstance(top[0], list):
            w = len(top) // len(widths)
            return [[int(t) for t in top[i * w + 1:i * w + 1 + k]] for i, k in enumerate(widths)]
        return real(top, widths)
    return orders_of


VARIANTS = [
    Mutant("the papers' stream after a rejecting walk counted without the resample's uniform",
           lambda mp: mp.setattr(randomness.PapersAhead, "walked", _walked_without_the_resample),
           (pac_ahead_equals_own_reads,)),
    Mutant("the read-back candidates leave the papers' generator where the walk left it",
           lambda mp: mp.setattr(randomness.PapersAhead, "levels_of", _levels_of_not_advancing),
           (pac_ahead_equals_own_reads,)),
    Mutant("a level's rider leaves out the ends at its leaf kids (accepted with a bonus token)",
           lambda mp: mp.setattr(pac.LevelsAhead, "pack", _ends_without_leaves(pac.LevelsAhead.pack)),
           (pac_ahead_equals_own_reads, pac_reads_within_two)),
    Mutant("every end on a level takes the carries of a walk ending at the level's node",
           lambda mp: mp.setattr(pac.LevelsAhead, "pack", _carries_from_the_level),
           (pac_ahead_equals_own_reads,)),
    Mutant("the keyed next candidates raced one position early",
           lambda mp: mp.setattr(randomness.KeyedAhead, "levels_t", _keyed_one_early(randomness.KeyedAhead.levels_t)),
           (pac_ahead_equals_own_reads,)),
    Mutant("the keyed rider's values read back without each row's support size",
           lambda mp: mp.setattr(noise, "orders_of", _flat_rows_without_support(noise.orders_of)),
           (pac_ahead_equals_own_reads,)),
    Mutant("the rider's numbers read apart from the walk's level read",
           lambda mp: mp.setattr(levelpack.Ahead, "at", _rider_read_apart(levelpack.Ahead.at)),
           (pac_reads_within_two,)),
]
