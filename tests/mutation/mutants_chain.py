"""Plausible wrong variants of the chain rules and the numbers drawn from them (protocol: tests/support/mutants.py).

Each variant is a mistake someone could make (or made: the clamped GSD window), installed by monkeypatching; each
names the fast exact checks that must catch it. tests/mutation/test_mutation.py runs them all (docs/methods.md §8.4).
"""
from __future__ import annotations

import dataclasses

import torch

from specviz.core import sampling
from specviz.engine import methods, registry, rules, summary, verify
from tests.engine import test_chain_laws as laws
from tests.engine import test_oracles as orc
from tests.engine import test_rules as tr
from tests.engine import test_summary as ts
from tests.support.mutants import Mutant


def _call(fn, *args):
    """A detector that runs fn(*args), named for the report."""
    def detector():
        fn(*args)
    detector.__name__ = f"{fn.__name__}{args!r}".replace(",)", ")")
    return detector


def _wrap(mp, module, name, make):
    mp.setattr(module, name, make(getattr(module, name)))


def _residual_q(real):
    def judge(q, p, a, x, u, residual=None, b=None):
        return real(q, p, a, x, u, residual or (lambda q_, p_, a_, x_: q_.clone()), b)
    return judge


def _cost_ignores_residual(real):
    def judge(q, p, a, x, u, residual=None, b=None):
        j = real(q, p, a, x, u, residual, b)
        return dataclasses.replace(j, tv_cost=(p * a - q).clamp_min(0).sum(-1))
    return judge


def _drawn_residual_only(real):
    def mass(q, p, a, x, residual, res):
        return (1 - (p * a).sum(-1, keepdim=True)).clamp_min(0) * res
    return mass


def _clamped_gsd(real):
    """The window before it was fixed: rank offsets clamped one by one, so the top token is counted repeatedly."""
    def gsd(q, p, vectors, group, gap, dist, mode="ours"):
        if mode != "ours":
            return real(q, p, vectors, group, gap, dist, mode)
        L, V = q.shape
        order = q.argsort(dim=-1, descending=True, stable=True)
        rank = torch.empty_like(order).scatter_(-1, order, torch.arange(V).expand(L, V))
        out = torch.ones_like(q)
        rows, ys = (p > 0).nonzero(as_tuple=True)
        r = (rank[rows, ys][:, None] + torch.arange(group) - group // 2).clamp(0, V - 1)
        z = order[rows[:, None], r]
        qz, qy = q[rows[:, None], z], q[rows, ys][:, None]
        d2 = (vectors[z] - vectors[ys][:, None]).pow(2).sum(-1)
        keep = ((qz - qy).abs() < gap) & (d2 < dist) & (z != ys[:, None])
        num, den = qy[:, 0] + (qz * keep).sum(-1), p[rows, ys] + (p[rows[:, None], z] * keep).sum(-1)
        out[rows, ys] = (num / den).clamp(max=1.0)
        return out
    return gsd


def _symmetric_released_window(real):
    def window(r, V, group, mode):
        if mode == "ours":
            return real(r, V, group, mode)
        start, stop = real(r, V, group, mode)
        return start, torch.where(stop > start, (stop + 1).clamp(max=V), stop)     # r-7 .. r+7: 15 tokens
    return window


def _csd_gate_inverted(real):
    return lambda q, p, relax, tv_pq, delta: _gate(q, p, relax, tv_pq >= delta)


def _gate(q, p, relax, gate):
    ratio = torch.where(p > 0, q / p.clamp_min(1e-30), torch.zeros_like(p))
    a = (ratio + (gate.float() * relax)[:, None]).clamp(max=1.0)
    return torch.where(p > 0, a, torch.ones_like(a))


def _raw_entropy(real):
    return lambda q, norm="raw": sampling.entropy(q, "raw")


def _uncapped_mass(real):
    def mass(q, neighbours, k, budget):
        return q + q[:, neighbours[:, :k]].sum(-1)
    return mass


def _additive_pp(real):
    return lambda q, delta, lam=None: delta if lam is None else lam - 1.0


def _k_neighbours(real):
    return lambda neighbours, k, budget_fn, variant: real(neighbours, max(0, k - 1), budget_fn, variant)


def _swapped_variants(real):
    swap = {"lumina": "llamagen", "llamagen": "lumina"}
    return lambda neighbours, k, budget_fn, variant: real(neighbours, k, budget_fn, swap[variant])


def _no_refusal(mp):
    mp.setitem(registry.REGISTRY, "lantern", dataclasses.replace(registry.REGISTRY["lantern"], check=None))


class _NoResidualRules:
    """verify_chain forgetting the rule's residual."""
    def __getattr__(self, name):
        if name == "judge":
            return lambda q, p, a, x, u, residual=None, b=None: rules.judge(q, p, a, x, u, None, b)
        return getattr(rules, name)


def _mean_over_all(real):
    def judged(steps):
        out = real(steps)
        for st in steps:
            for ev in st.events:
                if ev.commits:
                    out.setdefault(ev.pos, [])
        return out
    return judged


VARIANTS = [
    Mutant("residual = q (rejected slots resampled from the target)", lambda mp: _wrap(mp, rules, "judge", _residual_q),
           (tr.test_lossless_is_min_ratio_and_residual_is_plain,
            _call(laws.check_recorded_cost_is_tv_of_output_law, "csd"))),
    Mutant("tv_cost ignores the rule's own residual", lambda mp: _wrap(mp, rules, "judge", _cost_ignores_residual),
           (_call(laws.check_recorded_cost_is_tv_of_output_law, "gsd-released"),
            _call(laws.check_recorded_cost_is_tv_of_output_law, "lantern-lumina"))),
    Mutant("per-draft residual taken at the drawn token only",
           lambda mp: _wrap(mp, rules, "rejected_mass", _drawn_residual_only),
           (_call(laws.check_recorded_cost_is_tv_of_output_law, "lantern-llamagen"),
            _call(laws.check_recorded_cost_is_tv_of_output_law, "lanternpp-llamagen"))),
    Mutant("GSD window clamped (top token counted repeatedly)", lambda mp: _wrap(mp, rules, "gsd", _clamped_gsd),
           (laws.test_gsd_window_holds_distinct_tokens,)),
    Mutant("GSD released window r-7..r+7 (15 tokens)",
           lambda mp: _wrap(mp, rules, "_gsd_window", _symmetric_released_window),
           (_call(orc.test_gsd_released_matches_oracle, 24, 14, 0), laws.test_gsd_window_holds_distinct_tokens)),
    Mutant("GSD released distance on codebook vectors",
           lambda mp: mp.setattr(methods, "embedding_table", lambda model: model.code_vectors()),
           (laws.test_gsd_released_measures_input_embeddings,)),
    Mutant("CSD TV filter inverted", lambda mp: _wrap(mp, rules, "csd", _csd_gate_inverted),
           (laws.test_csd_cost_within_promise, tr.test_csd_cost_bound_and_zero_lambda)),
    Mutant("CSD entropy in nats where normalised units are asked",
           lambda mp: _wrap(mp, methods, "entropy", _raw_entropy),
           (laws.test_csd_rule_units, laws.test_csd_cost_within_promise)),
    Mutant("LANTERN budget not capped", lambda mp: _wrap(mp, rules, "lantern_mass", _uncapped_mass),
           (laws.test_lantern_cost_is_its_promise_and_within_delta_for_point_masses,
            _call(orc.test_lantern_matches_released, "lumina", 0.05))),
    Mutant("LANTERN++ budget additive (λ - 1) instead of (λ - 1)·q(x)",
           lambda mp: _wrap(mp, rules, "lantern_budget", _additive_pp),
           (laws.test_lantern_cost_is_its_promise_and_within_delta_for_point_masses,
            _call(orc.test_lantern_matches_released, "lumina", 4.0))),
    Mutant("LANTERN released residual zeroes k neighbours, not k+1",
           lambda mp: _wrap(mp, rules, "lantern_residual", _k_neighbours),
           (_call(orc.test_lantern_matches_released, "lumina", 0.3),)),
    Mutant("LANTERN LlamaGen / Lumina-mGPT residuals swapped",
           lambda mp: _wrap(mp, rules, "lantern_residual", _swapped_variants),
           (orc.test_lantern_variants_differ_only_on_sampled_drafts,
            _call(orc.test_lantern_matches_released, "llamagen", 0.3))),
    Mutant("lantern_delta > 1 silently taken as an additive budget", _no_refusal,
           (laws.test_lantern_refuses_delta_above_one,)),
    Mutant("verify_chain ignores the rule's residual", lambda mp: mp.setattr(verify, "rules", _NoResidualRules()),
           (laws.test_verify_chain_uses_the_rules_residual,)),
    Mutant("summary mean over every position, not the judged ones",
           lambda mp: _wrap(mp, summary, "judged_at_commit", _mean_over_all),
           (ts.test_summary_costs_and_bound,)),
]
