"""Wrong variants of the inspector's verdict line (specviz/render/verdict.py)."""
from specviz.render import verdict as vd
from tests.render.test_verdict import test_every_verdict_states_the_recorded_inequality as states_inequality
from tests.render.test_verdict import test_no_number_prints_as_a_rounded_zero as no_rounded_zero
from tests.support.mutants import Mutant

_JUDGED = vd._judged


def _flipped(ev, relaxation):
    """a rejection written with the inequality the wrong way round (u < b)."""
    v = _JUDGED(ev, relaxation)
    return vd.Verdict(v.line.replace(" ≥ b = ", " < b = "), v.counterfactual, v.cost_note)


def _counterfactual_against_b(ev, relaxation):
    """'lossless would have rejected' quoting b instead of the lossless ratio q/p."""
    v = _JUDGED(ev, relaxation)
    if ev.decision != "relaxed":
        return v
    su, sb = vd.pair(ev.u, ev.accept_prob)
    return vd.Verdict(v.line, f"Lossless would have rejected: u = {su} ≥ q/p = {sb}.", v.cost_note)


VARIANTS = [
    Mutant("verdict: a rejection's inequality flipped", lambda mp: mp.setattr(vd, "_judged", _flipped),
           (states_inequality,)),
    Mutant("verdict: counterfactual quotes b, not q/p", lambda mp: mp.setattr(vd, "_judged",
                                                                              _counterfactual_against_b),
           (states_inequality,)),
    Mutant("verdict: numbers at 4 fixed decimals (0.0000 beside a nonzero ratio)",
           lambda mp: mp.setattr(vd, "num", lambda v, digits=4: f"{v:.4f}"), (no_rounded_zero,)),
]
