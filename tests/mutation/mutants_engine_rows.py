"""Mutation-check variants for the keyed chain's cost and CSD's acceptance at the drafts (protocol:
tests/support/mutants.py): core/sampling.change_prob / joint_at, rules.csd_at."""
from __future__ import annotations

import pytest
import torch

from specviz.core import sampling
from specviz.engine import rules
from tests.engine.test_keyed_cost_rows import (
    test_change_prob_is_the_definition_with_its_head_and_tail,
    test_csd_at_the_drafts_is_the_rows_value_to_the_bit,
    test_joint_at_equals_the_definition_at_every_code,
)
from tests.support.mutants import Mutant


def _joint_counting_v_twice(p, q, idx):
    """Wrong: the q side sums the codes at or above r_v (v's own q_v/q_v counted on both sides)."""
    pd, qd = p.double(), q.double()
    r = torch.where(p > 0, qd / pd.clamp_min(1e-300), torch.where(q > 0, float("inf"), 0.0))
    rv, pv, qv = r.gather(-1, idx), pd.gather(-1, idx), qd.gather(-1, idx)
    le = r[..., None, :] <= rv[..., :, None]
    ge = r[..., None, :] >= rv[..., :, None]
    s = (pd[..., None, :] * le).sum(-1) / pv.clamp_min(1e-300) + (qd[..., None, :] * ge).sum(-1) / qv.clamp_min(1e-300)
    return (1.0 / s).to(p.dtype)


def _head_by_q(real):
    """Wrong: the exact head is the members heaviest under the target's law q, not the draft's p."""
    def change_prob(p, q, c):
        in_s = (c > 0) & (p > 0)
        width = min(max(1, sampling._JOINT_FLOATS // p.shape[-1]), p.shape[-1])
        idx = torch.where(in_s, q, -1.0).topk(width, -1).indices
        head = torch.zeros_like(in_s).scatter_(-1, idx, True) & in_s
        tail = in_s & ~head
        bound = (c * (p - p * q / (p + q).clamp_min(1e-38)).clamp_min(0)).where(tail, 0.0)
        j = torch.where(q.gather(-1, idx) > 0, sampling.joint_at(p, q, idx), 0.0)
        exact = (c.gather(-1, idx) * (p.gather(-1, idx) - j).clamp_min(0)).where(head.gather(-1, idx), 0.0)
        return exact.sum(-1) + bound.sum(-1), ~tail.any(-1)
    return change_prob


def _csd_at_unguarded(q, p, x, relax, tv_pq, delta):
    """Wrong: a draft its law never proposes (p(x) = 0) gets the gate alone, not the rows' 1."""
    rows = torch.arange(len(x))
    px, qx = p[rows, x], q[rows, x]
    gate = (tv_pq < delta).float() * relax
    return (torch.where(px > 0, qx / px.clamp_min(1e-30), torch.zeros_like(px)) + gate).clamp(max=1.0)


def _joint_cases():
    for seed in range(4):
        test_joint_at_equals_the_definition_at_every_code(seed)


def _change_prob_cases():
    mp = pytest.MonkeyPatch()
    try:
        for cap in (1 << 20, 40 * 97):
            test_change_prob_is_the_definition_with_its_head_and_tail(cap, mp)
    finally:
        mp.undo()


VARIANTS = [
    Mutant("keyed cost: J's q side counts v's own code too",
           lambda mp: mp.setattr(sampling, "joint_at", _joint_counting_v_twice), (_joint_cases, _change_prob_cases)),
    Mutant("keyed cost: the exact head chosen by q, not p",
           lambda mp: mp.setattr(sampling, "change_prob", _head_by_q(sampling.change_prob)), (_change_prob_cases,)),
    Mutant("CSD at the drafts: p(x) = 0 not set to 1",
           lambda mp: mp.setattr(rules, "csd_at", _csd_at_unguarded),
           (test_csd_at_the_drafts_is_the_rows_value_to_the_bit,)),
]
