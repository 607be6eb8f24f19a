"""Mutation-check variants for the engine's cost per step (protocol: tests/support/mutants.py)."""
from __future__ import annotations

import torch

from specviz.engine import gsd_sorted, randomness, rules
from tests.engine.test_gsd_sorted import test_sorted_path_equals_the_per_cell_path
from tests.engine.test_host_syncs import chain_reads_within_two
from tests.engine.test_keyed_chain_record import check_relaxed_rule_relaxes_under_keyed_noise
from tests.engine.test_lantern_cells import check_cells_equal_the_whole_vocabulary
from tests.support.mutants import Mutant


def _judge_reading_a_value(real):
    """Wrong: a rule that reads one value on the host (a planted .item(), e.g. to log the first acceptance)."""
    def judge(q, p, a, x, u, residual=None, b=None):
        a[0, 0].item()
        return real(q, p, a, x, u, residual, b)
    return judge


def _at_clamped_per_member(t, o, group):
    """Wrong: each member's rank clamped on its own (r - G//2 + o into [0, V - 1]) instead of the window sliding at
    the ends: the top (or bottom) token is counted repeatedly there."""
    V = t.shape[-1]
    idx = (torch.arange(V) - group // 2 + o).clamp(0, V - 1)
    return t[..., idx]


def _sorted_cases():
    for shape in ((6, 40, 8), (4, 12, 4), (5, 30, 3)):
        test_sorted_path_equals_the_per_cell_path(*shape)


def _wrap(mp, module, name, make):
    mp.setattr(module, name, make(getattr(module, name)))


VARIANTS = [
    Mutant("a rule reads a value on the host (planted .item())",
           lambda mp: _wrap(mp, rules, "judge", _judge_reading_a_value), (chain_reads_within_two,)),
    Mutant("GSD sorted path: members clamped one by one at the ends",
           lambda mp: mp.setattr(gsd_sorted, "_at", _at_clamped_per_member), (_sorted_cases,)),
]


def _lantern_cells_with_themselves(q, p, nbrs, k, budget):
    """Wrong: the local path's neighbours start at the cell itself (its own mass counted as borrowed)."""
    rows, ys = (p > 0).nonzero(as_tuple=True)
    if len(ys) * rules._SORTED_FROM >= p.numel():
        return rules.lossless(rules.lantern_mass(q, nbrs, k, budget), p)
    nb = nbrs[ys, :k]
    heads = torch.arange(len(ys)) * (nb.shape[1] + 1)
    cols = torch.cat([ys[:, None], nb], 1).view(-1)
    local = torch.zeros(len(cols), nb.shape[1], dtype=torch.long)
    local[heads] = heads[:, None] + torch.arange(nb.shape[1])
    b = budget[:, cols] if torch.is_tensor(budget) else budget
    mass = rules.lantern_mass(q[:, cols], local, k, b)[rows, heads]
    out = torch.ones_like(p)
    out[rows, ys] = (mass / p[rows, ys].clamp_min(1e-30)).clamp(max=1.0)
    return out


VARIANTS.append(Mutant("LANTERN local path counts the cell among its neighbours",
                       lambda mp: mp.setattr(rules, "lantern", _lantern_cells_with_themselves),
                       (check_cells_equal_the_whole_vocabulary,)))


def _keyed_chain_always_lossless(real):
    """Wrong: the keyed randomness tells keyed_chain every rule is lossless (the record's flag not passed on)."""
    def chain(*a, **kw):
        kw["lossless"] = True
        return real(*a, **kw)
    return chain


VARIANTS.append(Mutant("keyed chain told every rule is lossless",
                       lambda mp: _wrap(mp, randomness, "keyed_chain", _keyed_chain_always_lossless),
                       (check_relaxed_rule_relaxes_under_keyed_noise,)))
