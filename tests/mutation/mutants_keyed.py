"""Mutation-check variants for keyed noise (docs/methods.md §9; protocol: tests/support/mutants.py)."""
from __future__ import annotations

import torch

from specviz.analysis import paired
from specviz.core import sampling
from specviz.core.sampling import race, race_noise
from specviz.engine import keyed
from specviz.render import verdict
from tests.analysis.test_keyed_paired import test_changed_map_categories, test_pixel_diff_by_hand
from tests.app.test_keyed_lanes import lanes_state_what_changed_against_ar
from tests.engine.test_keyed_engine import (
    test_keyed_verdicts_state_the_keyed_decision,
    test_toy_lossless_tokens_equal_ars,
)
from tests.engine.test_keyed_noise import (
    test_change_prob_is_p_of_change_and_bounds_the_exact_tv,
    test_coupled_accept_is_j_over_p,
    test_coupled_joint_closed_form_matches_monte_carlo_and_bounds,
    test_keyed_chain_output_law_matches_the_exact_law,
    test_keyed_tree_level_law_matches_its_recorded_cost,
    test_lossless_keyed_chain_commits_the_race_sample,
    test_race_noise_is_a_function_of_seed_and_position_only,
)
from tests.render.test_keyed_exports import test_the_slide_s_row_labels_carry_it, test_the_words
from tests.support.mutants import Mutant


def _identical_unless_changed(method, changed):
    """Wrong: a lane nothing was compared with (changed None, e.g. the papers' noise) is called identical to AR."""
    if method == "ar":
        return ""
    return "identical to AR ✓" if not changed else f"{changed} token{'s' if changed != 1 else ''} changed vs AR"


CHAIN = (test_lossless_keyed_chain_commits_the_race_sample, test_keyed_chain_output_law_matches_the_exact_law)


def _accept_as_papers(b, e):
    """Wrong: a miss is accepted with the rule's whole acceptance b (lossless: min(1, q/p)), as the papers' u < b."""
    return b.clamp(0.0, 1.0)


def _excess_undivided(b, e):
    """Wrong: the relaxation's excess b - e, not renormalised by the 1 - e of misses."""
    return (b - e).clamp(0.0, 1.0)


def _joint_without_max(p, q):
    """Wrong: J_v = 1 / Σ_w (p_w/p_v + q_w/q_v - [w = v]), the max replaced by a sum."""
    both = (p > 0) & (q > 0)
    s = 1 / p.clamp_min(1e-38) + 1 / q.clamp_min(1e-38) - 1
    return torch.where(both, 1.0 / s, torch.zeros_like(p))


def _accept_without_max(p, q, x):
    rows = torch.arange(len(x))
    px, qx = p[rows, x], q[rows, x]
    return torch.where((px > 0) & (qx > 0), 1.0 / (px * (1 / px + 1 / qx - 1)), torch.zeros_like(px))


def _change_without_max(p, q, c):
    j = torch.where((p > 0) & (q > 0), 1.0 / (1 / p.clamp_min(1e-38) + 1 / q.clamp_min(1e-38) - 1),
                    torch.zeros_like(p))
    return (c * (p - j).clamp_min(0)).sum(-1), torch.ones(len(p), dtype=torch.bool)


def _race_by_step(self, pos, law):
    """Wrong: the race keyed by how many races this run has asked for (consumption order), not by position."""
    self._calls = getattr(self, "_calls", -1) + 1
    return int(race(law, race_noise(self.seed, self._calls, self.vocab)))


def _level_cost_without_miss(q, laws, xs, a):
    """Wrong: a point-mass level's cost 1 - Π_j (1 - c_j), without the chance (1 - Σ_K q) that no sibling is x*."""
    xt = torch.tensor(xs)
    if a.dim() == 1:                 # a at the cells of distinct point masses (keyed.level_cost's cells form)
        return 1.0 - float(torch.prod(1 - keyed.relax_excess(a, keyed.sampling.exact_at(torch.ones_like(a), q[xt]))))
    p = torch.stack(laws)
    c = keyed.relax_excess(a, keyed.rules.lossless(q[None].expand_as(p), p))
    return 1.0 - float(torch.prod(1 - c[torch.arange(len(xs)), xt]))


def _psnr_unit_peak(image, ar_image):
    """Wrong: PSNR with a peak of 1 (images read as 0-1) on 0-255 pixels."""
    psnr, mad = _real_pixel_diff(image, ar_image)
    return (psnr if psnr == float("inf") else psnr - 20 * 2.4065401804339555), mad


def _no_first_departure(trace, ar):
    """Wrong: every changed cell drawn as downstream, the first departure not told apart."""
    out = _real_category(trace, ar)
    out[out == paired.FIRST] = paired.DOWNSTREAM
    return out


def _verdict_papers_only(ev, relaxation="the rule's relaxation"):
    """Wrong: the papers' verdict (u against b) on a keyed event, as if the noise did not matter."""
    return _real_verdict(ev.__class__(**{**ev.__dict__, "target_sample": None}), relaxation)


_real_verdict = verdict.verdict
_real_pixel_diff, _real_category = paired.pixel_diff, paired.changed_category

def _against_itself(traces):
    """Wrong: each lane compared with its own tokens (every lane 'identical to AR')."""
    return {m: 0 for m, tr in traces.items() if tr.tokens and traces.get("ar") is not None}


VARIANTS = [
    Mutant("keyed-miss-accepted-with-min-q-over-p", lambda mp: mp.setattr(keyed, "relax_excess", _accept_as_papers),
           CHAIN + (test_toy_lossless_tokens_equal_ars,)),
    Mutant("keyed-excess-not-renormalised", lambda mp: mp.setattr(keyed, "relax_excess", _excess_undivided), CHAIN),
    Mutant("coupled-joint-without-max", lambda mp: mp.setattr(sampling, "coupled_joint", _joint_without_max),
           (test_coupled_joint_closed_form_matches_monte_carlo_and_bounds, test_coupled_accept_is_j_over_p)),
    Mutant("coupled-accept-without-max", lambda mp: mp.setattr(sampling, "coupled_accept", _accept_without_max),
           (test_coupled_accept_is_j_over_p,)),
    Mutant("change-prob-without-max", lambda mp: mp.setattr(sampling, "change_prob", _change_without_max),
           (test_change_prob_is_p_of_change_and_bounds_the_exact_tv,)),
    Mutant("keyed-level-cost-without-miss", lambda mp: mp.setattr(keyed, "level_cost", _level_cost_without_miss),
           (test_keyed_tree_level_law_matches_its_recorded_cost,)),
    Mutant("lane-compared-with-itself", lambda mp: mp.setattr(paired, "against_ar", _against_itself),
           (lanes_state_what_changed_against_ar, test_the_slide_s_row_labels_carry_it)),
    Mutant("uncompared-lane-called-identical", lambda mp: mp.setattr(paired, "vs_ar_words", _identical_unless_changed),
           (test_the_words, test_the_slide_s_row_labels_carry_it)),
    Mutant("psnr-peak-one", lambda mp: mp.setattr(paired, "pixel_diff", _psnr_unit_peak), (test_pixel_diff_by_hand,)),
    Mutant("changed-map-without-first-departure",
           lambda mp: mp.setattr(paired, "changed_category", _no_first_departure), (test_changed_map_categories,)),
    Mutant("keyed-verdict-as-papers", lambda mp: mp.setattr(verdict, "verdict", _verdict_papers_only),
           (test_keyed_verdicts_state_the_keyed_decision,)),
    Mutant("keyed-by-step-not-position", lambda mp: mp.setattr(keyed.Noise, "race", _race_by_step),
           (test_race_noise_is_a_function_of_seed_and_position_only, test_toy_lossless_tokens_equal_ars)),
]
