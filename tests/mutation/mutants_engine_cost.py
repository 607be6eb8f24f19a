"""Mutation-check variants for the engine's cost per step (issue 41; protocol: tests/support/mutants.py)."""
from __future__ import annotations

import torch

from specviz.engine import gsd_sorted, rules
from tests.engine.test_gsd_sorted import test_sorted_path_equals_the_per_cell_path
from tests.engine.test_host_syncs import chain_reads_within_two
from tests.support.mutants import Mutant


def _judge_reading_a_value(real):
    """Wrong: a rule that reads one value on the host (a planted .item(), e.g. to log the first acceptance)."""
    def judge(q, p, a, x, u, residual=None):
        a[0, 0].item()
        return real(q, p, a, x, u, residual)
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
