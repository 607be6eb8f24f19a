"""Mutation-check variants for MC-SJD coupling and SJD-PAC candidate laws (protocol: tests/support/mutants.py).

Each variant breaks the marginal that exactness rests on; the detectors compute it exactly over a small vocabulary.
"""
from __future__ import annotations

import torch

from specviz.core.sampling import safe_norm
from specviz.engine.drafters import jacobi, pac
from tests.engine.test_coupled_jacobi_exactness import (
    test_coupling_keeps_as_often_as_possible,
    test_coupling_marginal_is_exactly_the_new_law,
    test_pac_candidates_p3_output_is_exact,
)
from tests.support.mutants import Mutant

COUPLING = (test_coupling_marginal_is_exactly_the_new_law, test_coupling_keeps_as_often_as_possible)


def _keep_without_ratio(x, p_old, p_new):
    """Wrong: keep x with probability min(1, p_new(x)), ignoring the law x came from."""
    keep, fallback = _real_coupling(x, p_old, p_new)
    return p_new[torch.arange(len(x)), x].clamp(max=1.0), fallback


def _fallback_from_new(x, p_old, p_new):
    """Wrong: on a move, draw from p_new itself instead of norm([p_new - p_old]+)."""
    keep, _ = _real_coupling(x, p_old, p_new)
    return keep, p_new


def _fallback_reversed(x, p_old, p_new):
    """Wrong: the residual the other way round, norm([p_old - p_new]+)."""
    keep, _ = _real_coupling(x, p_old, p_new)
    return keep, safe_norm((p_old - p_new).clamp_min(0), p_new)[0]


def _siblings_with_replacement(base, tokens):
    """Wrong: every PAC candidate judged with the base law, as if drawn with replacement."""
    return [base / base.sum() for _ in tokens]


_real_coupling = jacobi.coupling

VARIANTS = [
    Mutant("coupling-keep-without-ratio", lambda mp: mp.setattr(jacobi, "coupling", _keep_without_ratio), COUPLING),
    Mutant("coupling-fallback-from-new", lambda mp: mp.setattr(jacobi, "coupling", _fallback_from_new), COUPLING),
    Mutant("coupling-fallback-reversed", lambda mp: mp.setattr(jacobi, "coupling", _fallback_reversed), COUPLING),
    Mutant("pac-siblings-with-replacement", lambda mp: mp.setattr(pac, "sibling_laws", _siblings_with_replacement),
           (test_pac_candidates_p3_output_is_exact,)),
]
