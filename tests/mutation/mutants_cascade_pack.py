"""Plausible wrong variants of CASCADE's one-read level (levelpack.cascade_full, fit_part, member_masses: the level at
s = 1 packed with its budget test and its Sibling masses), each with the tests that must catch it (protocol:
tests/support/mutants.py). Every variant wraps the real function, so it stays what the code would be with one line
wrong."""
from __future__ import annotations

import json

import torch

from specviz.engine import budgetwalk, levelpack
from tests.engine import test_tree_level_laws as T
from tests.engine.test_golden import GOLDEN, test_traces_equal_golden
from tests.support.mutants import Mutant

_fit_part, _member_masses = levelpack.fit_part, levelpack.member_masses


def _golden():
    test_traces_equal_golden(json.loads(GOLDEN.read_text()))


def _always_fits(lvl, left):
    """Wrong: the budget test left out (every level kept at s = 1: the budget checked after deciding)."""
    out = _fit_part(lvl, left)
    out[-1] = 1.0
    return out


def _fits_on_the_budget_not_left(lvl, left):
    """Wrong: the level tested against what the step's earlier levels had left plus their spending: the whole
    budget (left + the spent part), here 1.0, the default budget."""
    return _fit_part(lvl, 1.0)


def _masses_at_the_node(tree, cur, groups, q_cur):
    """Wrong: a member's Sibling mass gathered at its node id, not at its token."""
    keys, _ = _member_masses(tree, cur, groups, q_cur)
    return keys, q_cur[torch.tensor([m for _, m in keys], dtype=torch.long)].to(torch.float64)


def _both(name, fn):
    return lambda mp: mp.setattr(budgetwalk, name, fn)


VARIANTS = [
    Mutant("CASCADE one-read level: the budget test always passes (never scaled)",
           _both("fit_part", _always_fits),
           (T.test_cascade_step_budget_bounds_the_sum_of_level_tvs, _golden)),
    Mutant("CASCADE one-read level: tested against the whole budget, not what is left",
           _both("fit_part", _fits_on_the_budget_not_left),
           (T.test_cascade_step_budget_bounds_the_sum_of_level_tvs, _golden)),
    Mutant("CASCADE one-read level: Sibling masses gathered at the member's node id, not its token",
           _both("member_masses", _masses_at_the_node),
           (_golden,)),
]
