"""Mutation-check variants for the tree walks' reads per step (protocol: tests/support/mutants.py): a value read on
the host inside a level's walk must show in tests/engine/test_host_syncs.py."""
from __future__ import annotations

import torch

from specviz.engine import budgetwalk, keyed, levelpack, treewalk, verify
from specviz.engine.drafters import pac
from tests.engine.test_host_syncs import (
    cascade_reads_exactly,
    grouped_and_proactive_reads_within_ceiling,
    row_level_walks_read_at_most_twice,
    test_tree_walks_read_at_most_twice_a_step,
    tree_reads_within_ceiling,
)
from tests.engine.test_pac_levels import test_papers_levels_equal_the_level_by_level_draws
from tests.engine.test_tree_ahead import one_read_walks_as_level_by_level
from tests.support.mutants import Mutant


def _judge_one_reading(real):
    """Wrong: a sibling's judgement reads its acceptance on the host (a planted .item(), e.g. to log it)."""
    def judge_one(r, p, a, pa, x):
        out = real(r, p, a, pa, x)
        out[0].item()
        return out
    return judge_one


def _point_residual_reading(real):
    """Wrong: a point-mass sibling's residual reads its acceptance on the host (a planted .item(), e.g. to log it)."""
    def point_residual(r, rx, a, x):
        a.item()
        return real(r, rx, a, x)
    return point_residual


def _keyed_level_reading(real):
    """Wrong: a keyed level reads its cost on the host (a planted float())."""
    def level(q, laws, xs, accept_rows):
        lvl = real(q, laws, xs, accept_rows)
        float(lvl.cost)
        return lvl
    return level


VARIANTS = [
    Mutant("a row-wise tree level reads a sibling's acceptance on the host (planted .item(), papers' noise)",
           lambda mp: mp.setattr(verify, "_judge_one", _judge_one_reading(verify._judge_one)),
           (row_level_walks_read_at_most_twice,)),
    Mutant("a point-mass tree level reads a sibling's acceptance on the host (planted .item(), papers' noise)",
           lambda mp: mp.setattr(verify, "_point_residual", _point_residual_reading(verify._point_residual)),
           (tree_reads_within_ceiling, test_tree_walks_read_at_most_twice_a_step)),
    Mutant("a keyed tree level reads its cost on the host (planted float())",
           lambda mp: mp.setattr(keyed, "_level", _keyed_level_reading(keyed._level)),
           (tree_reads_within_ceiling, test_tree_walks_read_at_most_twice_a_step)),
]


def _draw_reading(real):
    """Wrong: SJD-PAC's candidates read each drawn token on the host (a planted int(), e.g. to skip a repeat)."""
    def draw(law, u):
        t = real(law, u)
        int(t.view(-1)[0])
        return t
    return draw


def _member_masses_one_by_one(tree, cur, groups, q_cur):
    """Wrong: a CASCADE level's Sibling masses read q once per member (the old float(q[parent, token]) per Sibling)."""
    keys, _ = levelpack.member_masses(tree, cur, groups, q_cur)
    return keys, torch.tensor([float(q_cur[tree.tokens[m]]) for _, m in keys], dtype=torch.float64)


def _fit_read_apart(real):
    """Wrong: a CASCADE level's budget test read on its own (a planted .tolist(), the old first fit build's read)."""
    def fit(lvl, left):
        out = real(lvl, left)
        out.tolist()
        return out
    return fit


def _rewinds_past_the_batch(real):
    """Wrong: after SJD-PAC's batch of uniforms the generator is left past the whole batch (not rewound to what the
    levels used): fine while no level runs out of mass, another stream when one does."""
    def levels(carries, uniform, widths, gen):
        state = gen.get_state()
        out = real(carries, uniform, widths, gen)
        gen.set_state(state)
        torch.rand(sum(pac.uniforms_needed(c, w) for c, w in zip(carries, widths)), generator=gen)
        return out
    return levels


def _papers_levels_cases():
    for seed in range(8):
        test_papers_levels_equal_the_level_by_level_draws(seed)


VARIANTS += [
    Mutant("SJD-PAC's candidates read each drawn token on the host (planted int())",
           lambda mp: mp.setattr(pac, "draw", _draw_reading(pac.draw)), (grouped_and_proactive_reads_within_ceiling,)),
    Mutant("CASCADE's Sibling masses read q once per member",
           lambda mp: (mp.setattr(budgetwalk, "member_masses", _member_masses_one_by_one),),
           (grouped_and_proactive_reads_within_ceiling, cascade_reads_exactly)),
    Mutant("CASCADE's budget test read apart from the level's numbers",
           lambda mp: (mp.setattr(budgetwalk, "fit_part", _fit_read_apart(levelpack.fit_part)),),
           (grouped_and_proactive_reads_within_ceiling, cascade_reads_exactly)),
    Mutant("SJD-PAC's generator advanced past the whole batch of uniforms, not by what the levels used",
           lambda mp: mp.setattr(pac, "papers_levels", _rewinds_past_the_batch(pac.papers_levels)),
           (_papers_levels_cases,)),
]


def _offsets_without_the_accepted_one(tree):
    """Wrong: kid j's level starts j uniforms after its parent's (the accepted kid's own uniform not counted)."""
    off = [0] * len(tree.tokens)
    for i, kids in enumerate(tree.children):
        for j, c in enumerate(kids):
            off[c] = off[i] + j
    return off


def _ahead_not_rewound(real):
    """Wrong: the one-read walk leaves the generator past its whole batch of uniforms (not rewound before the walk
    advances it by what it used)."""
    def ahead(tree, q, accept_fn, gen, bonus_ok, norm, reads=2):
        out = real(tree, q, accept_fn, gen, bonus_ok, norm, reads)
        torch.rand(len(tree.tokens) + 1, generator=gen)
        return out
    return ahead


VARIANTS += [
    Mutant("the one-read tree walk starts a level's uniforms one early (kid j at j, not j + 1, after its parent)",
           lambda mp: mp.setattr(treewalk, "uniform_offsets", _offsets_without_the_accepted_one),
           (one_read_walks_as_level_by_level,)),
    Mutant("the one-read tree walk leaves the generator past its batch of uniforms",
           lambda mp: mp.setattr(treewalk, "_ahead", _ahead_not_rewound(treewalk._ahead)),
           (one_read_walks_as_level_by_level,)),
]


def _one_level_a_read(self, node):
    """Wrong: the walk reads each level as it arrives there (the second read not the whole subtree)."""
    if node not in self.values:
        self.values.update({c: self.value(c, v) for c, v in levelpack.read_ahead({node: self.pack(node)}).items()})
    return self.values[node]


VARIANTS += [
    Mutant("a tree walk without a budget reads each level as it arrives (not the subtree it goes into at once)",
           lambda mp: mp.setattr(levelpack.Ahead, "at", _one_level_a_read),
           (tree_reads_within_ceiling, test_tree_walks_read_at_most_twice_a_step)),
]
