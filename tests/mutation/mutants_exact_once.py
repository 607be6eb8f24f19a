"""Mutation-check variants for min(1, q/p) at a draft, written once (core/sampling.exact_at, imported by the rules and
the Jacobi drafters' coupling; protocol: tests/support/mutants.py)."""
from __future__ import annotations

import torch

from specviz.core import sampling
from specviz.engine import rules
from specviz.engine.drafters import jacobi
from tests.engine.test_exact_once import test_exact_probability_at_p_zero_has_one_answer
from tests.support.mutants import Mutant


def _one_at_zero(px, qx, off=1.0):
    """Wrong: a draft its law never proposes counted as exactly accepted (the old re-scoring's answer), whatever the
    caller asks for there."""
    return torch.where(px > 0, (qx / px.clamp_min(1e-30)).clamp(max=1.0), torch.ones_like(px))


VARIANTS = [
    Mutant("min(1, q/p) at a draft answers 1 where p(x) = 0",
           lambda mp: [mp.setattr(m, "exact_at", _one_at_zero) for m in (sampling, rules, jacobi)],
           (test_exact_probability_at_p_zero_has_one_answer,)),
]
