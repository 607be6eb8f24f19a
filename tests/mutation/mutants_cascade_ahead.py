"""Plausible wrong variants of CASCADE's two-read walk (engine/budgetwalk.py: the root's groups formed where the
cosines live, then the accepted kid's subtree with each level's budget test against its own path), each with the
tests that must catch it (protocol: tests/support/mutants.py)."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import torch

from specviz.engine import budgetwalk, groups, treewalk
from tests.engine.test_cascade_ahead import (
    device_groups_equal_host_groups,
    test_exact_means_at_most_two_other_tokens,
    test_path_lefts_spend_each_ancestor_once_in_path_order,
    two_read_walks_equal_level_by_level,
)
from tests.engine.test_host_syncs import cascade_reads_exactly
from tests.support.mutants import Mutant

_path_lefts, _masks = budgetwalk.path_lefts, groups.Groups.masks


def _subtree_root_budget_for_all(tree, nodes, budget, used, costs, device=None):
    """Wrong: every level of the subtree tested against what the walk had left at the subtree's root (the levels
    above a node inside the subtree not charged)."""
    lefts = _path_lefts(tree, nodes, budget, used, costs, device)
    return {c: lefts[nodes[0]] for c in nodes}


def _own_level_charged(tree, nodes, budget, used, costs, device=None):
    """Wrong: a node's budget left with its own level's cost already spent (the parent's left, one level late)."""
    lefts = _path_lefts(tree, nodes, budget, used, costs, device)
    return {c: v - costs[c].double() for c, v in lefts.items()}


def _thresholds(shift):
    """Groups.masks with the knobs' thresholds moved by shift(τ): the same test on other numbers."""
    def masks(self, kids):
        real_cfg = self.cfg
        self.cfg = SimpleNamespace(cascade_sets=real_cfg.cascade_sets, tau_pos=shift(real_cfg.tau_pos),
                                   tau_seq=shift(real_cfg.tau_seq))
        try:
            return _masks(self, kids)
        finally:
            self.cfg = real_cfg
    return masks


def _own_token_kept(self, kids):
    """Wrong: a kid's device group keeps its own token's column (its own mass added to its extra)."""
    cand, mask = _masks(self, kids)
    own = (cand[None] == torch.tensor([self.tree.tokens[c] for c in kids])[:, None]).float()
    return cand, torch.maximum(mask, own)


def _three_tokens_exact(self, kids):
    """Wrong: the device sums trusted with three other tokens in a group (their order of addition matters)."""
    tokens = self.tree.tokens
    return all(len({tokens[m] for m in self(c, kids).members} - {tokens[c]}) <= 3 for c in kids)


def _offsets_from_the_tree_root(tree):
    """Wrong (papers' noise): a subtree's uniforms sliced from the batch at the tree root's offsets (kid j's level
    j uniforms after its parent's: the accepted kid's own uniform not counted)."""
    off = [0] * len(tree.tokens)
    for i, kids in enumerate(tree.children):
        for j, c in enumerate(kids):
            off[c] = off[i] + j
    return off


def _stale_after_refit(self, cur, used):
    """Wrong: after a level the budget scaled, the levels below it are taken from the subtree read before, their
    budget tests made with that level's unscaled cost (BudgetLevels.at without its `self.values = {}`): the walk
    comes out the same (such a test is stricter, and the fit path redoes a level it fails), its reads do not."""
    kids = self.tree.children[cur]
    if cur not in self.values:
        root = not self.values and cur == 0 and hasattr(self.group_fn, "masks") and bool(kids)
        self.values = self._read([cur] if cur == 0 else budgetwalk.walkable(self.tree, cur), used, root)
        if root and not self.group_fn.exact(kids):
            self.values = self._read([cur], used, False)
    v, lvl, extras, fits, masses, u = self.values[cur]
    self.masses.update(masses)
    groups_ = [self.group_fn(c, kids) for c in kids]
    if fits:
        return v, lvl, groups_, extras
    v, lvl, groups_ = self.refit(cur, self.budget - used, u)
    return v, lvl, groups_, lvl.extras


VARIANTS = [
    Mutant("CASCADE's subtree: every level tested against the subtree root's budget left",
           lambda mp: mp.setattr(budgetwalk, "path_lefts", _subtree_root_budget_for_all),
           (two_read_walks_equal_level_by_level, test_path_lefts_spend_each_ancestor_once_in_path_order)),
    Mutant("CASCADE's subtree: a level's own cost charged before its budget test",
           lambda mp: mp.setattr(budgetwalk, "path_lefts", _own_level_charged),
           (two_read_walks_equal_level_by_level, test_path_lefts_spend_each_ancestor_once_in_path_order,
            cascade_reads_exactly)),
    Mutant("CASCADE's device groups: cos > τ (not >=)",
           lambda mp: mp.setattr(groups.Groups, "masks", _thresholds(lambda t: math.nextafter(t, math.inf))),
           (device_groups_equal_host_groups,)),
    Mutant("CASCADE's device groups: cosines compared with τ in float32",
           lambda mp: mp.setattr(groups.Groups, "masks", _thresholds(lambda t: float(np.float32(t)))),
           (device_groups_equal_host_groups,)),
    Mutant("CASCADE's device groups: a kid's own token kept in its group",
           lambda mp: mp.setattr(groups.Groups, "masks", _own_token_kept),
           (device_groups_equal_host_groups,)),
    Mutant("CASCADE's device groups: three other tokens counted exact",
           lambda mp: mp.setattr(groups.Groups, "exact", _three_tokens_exact),
           (test_exact_means_at_most_two_other_tokens,)),
    Mutant("CASCADE's device groups: wide groups never rebuilt from the read groups",
           lambda mp: mp.setattr(groups.Groups, "exact", lambda self, kids: True),
           (test_exact_means_at_most_two_other_tokens, two_read_walks_equal_level_by_level)),
    Mutant("CASCADE's subtree uniforms sliced at the wrong offsets (papers' noise)",
           lambda mp: mp.setattr(treewalk, "uniform_offsets", _offsets_from_the_tree_root),
           (two_read_walks_equal_level_by_level,)),
    Mutant("CASCADE's levels below a scaled level taken from the subtree read before it",
           lambda mp: mp.setattr(budgetwalk.BudgetLevels, "at", _stale_after_refit),
           (two_read_walks_equal_level_by_level, cascade_reads_exactly)),
]
