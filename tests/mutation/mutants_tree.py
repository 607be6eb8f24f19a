"""Plausible wrong variants of the tree side, each with the fast enumeration tests of
tests/engine/test_tree_level_laws.py that must catch it (protocol: tests/support/mutants.py). Every variant wraps the
real function, so
it stays what the code would be with one line wrong."""
from __future__ import annotations

from dataclasses import replace

import torch

from specviz.engine import events, groups, rules, treewalk, verify
from specviz.engine.drafters.tree import HeadDrafter
from tests.engine import test_tree_level_laws as T
from tests.support.mutants import Mutant

_level_law, _tree_events, _cascade_groups = verify.level_law, events.tree_events, groups.cascade_groups
_point_law = verify.point_law


def _uncharged(q, laws, xs, accept, residual=None):
    """Decides with every sibling's relaxation, but charges only the first sibling's: later ones count as lossless."""
    real = _level_law(q, laws, xs, accept, residual)
    seen = _level_law(q, laws, xs, lambda j, r, p: accept(j, r, p) if j == 0 else (rules.lossless(r[None], p[None])[0],
                                                                                    0.0), residual)
    return replace(real, law=seen.law, cost=seen.cost)


def _uncharged_points(q, laws, xs, accept, residual=None):
    """_uncharged for a level of distinct point masses (verify.point_law: accept gives each sibling's cell)."""
    real = _point_law(q, laws, xs, accept, residual)
    seen = _point_law(q, laws, xs, lambda j, r, p: accept(j, r, p) if j == 0 else (
        rules.lossless.at(r[None], p[None], torch.tensor([xs[j]]))[0], 0.0), residual)
    return replace(real, law=seen.law, cost=seen.cost)


def _summed(*a, **k):
    out = _tree_events(*a, **k)
    if out and out[-1].decision == "resampled":
        out[-1] = replace(out[-1], tv_cost=sum(e.tv_cost for e in out[:-1] if e.pos == out[-1].pos))
    return out


def _siblings_only(tree, hidden, cfg):
    """The paper reading asked for, but I(n) and C(n) restricted to same-parent siblings."""
    fn = _cascade_groups(tree, hidden, cfg)

    def group_fn(node, kids):
        g = fn(node, kids)
        keep = set(kids) - {node}
        return replace(g, members=[m for m in g.members if m in keep], inter=[m for m in g.inter if m in keep],
                       conv=[m for m in g.conv if m in keep])
    return group_fn


VARIANTS = [
    Mutant("tree: a CASCADE sibling not charged (only the first sibling's relaxation in the level's cost)",
           lambda mp: (mp.setattr(verify, "level_law", _uncharged), mp.setattr(verify, "point_law", _uncharged_points)),
           (T.test_cascade_point_mass_level_cost_is_the_tv_of_its_output_law,
            T.test_cascade_step_budget_bounds_the_sum_of_level_tvs)),
    Mutant("tree: resampled cost summed per rejected sibling",
           lambda mp: mp.setattr(events, "tree_events", _summed),
           (T.test_resampled_event_costs_the_level_once,)),
    Mutant("tree: later siblings judged with the original q instead of the running residual",
           lambda mp: mp.setattr(verify, "level_law", lambda q, laws, xs, accept, residual=None: _level_law(
               q, laws, xs, lambda j, r, p: accept(j, q, p), residual)),
           (T.test_sd_point_mass_level_outputs_q, T.test_sd_sampled_siblings_output_q_over_the_draws)),
    Mutant("tree: residual = q (the running residual never moves)",
           lambda mp: mp.setattr(verify, "level_law", lambda q, laws, xs, accept, residual=None: _level_law(
               q, laws, xs, accept, lambda r, p, a, x: r)),
           (T.test_sd_point_mass_level_outputs_q, T.test_sd_sampled_siblings_output_q_over_the_draws)),
    Mutant("tree: CASCADE paper reading uses only same-parent siblings",
           lambda mp: mp.setattr(groups, "cascade_groups", _siblings_only),
           (T.test_paper_sets_reach_the_whole_level_and_consecutive_levels,)),
    Mutant("tree: CASCADE budget checked after deciding (the level is never scaled to fit)",
           lambda mp: mp.setattr(verify, "fit_level", lambda build, left, iters=16: build(1.0)),
           (T.test_cascade_point_mass_level_cost_is_the_tv_of_its_output_law,
            T.test_cascade_step_budget_bounds_the_sum_of_level_tvs,
            T.test_sampled_cascade_level_cost_is_its_fixed_law_tv)),
    Mutant("tree: TV(p, q) of later siblings measured against the running residual",
           lambda mp: mp.setattr(treewalk, "sibling_tvs", lambda p, q, r: (float(T.tv(p, r)),) * 2),   # the walk's
           (T.test_later_siblings_record_tv_against_q_and_against_the_residual,)),
    Mutant("tree: sampled siblings pruned by their drawn scores",
           lambda mp: mp.setattr(HeadDrafter, "_keep", classmethod(
               lambda cls, score, parents, laws, limit: cls._prune(score, parents, limit))),
           (T.test_sampled_trees_keep_each_nodes_children_in_draw_order,)),
    Mutant("tree: a budget-scaled level charged as if unscaled (cost taken at s = 1)",
           lambda mp: mp.setattr(verify, "fit_level", lambda build, left, iters=16, _f=verify.fit_level: replace(
               _f(build, left, iters), cost=build(1.0).cost)),
           (T.test_cascade_point_mass_level_cost_is_the_tv_of_its_output_law,
            T.test_cascade_step_budget_bounds_the_sum_of_level_tvs)),
]
