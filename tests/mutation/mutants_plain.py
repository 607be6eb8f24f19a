"""Mutation-check variants for the inspector's plain-words line (protocol: tests/support/mutants.py)."""
from __future__ import annotations

from dataclasses import replace

from specviz.render import verdict
from tests.render.test_plain import plain_says_the_recorded_event
from tests.render.test_plain_keyed import tiny_keyed_race_says_what_is_true
from tests.support.mutants import Mutant

_PLAIN = verdict.plain


def _relaxed_as_rejected(ev) -> str:
    """Wrong: only exactly accepted drafts called kept (a relaxed acceptance said as thrown away)."""
    return _PLAIN(replace(ev, decision="rejected") if ev.decision == "relaxed" else ev)


_DECIDING, _FIRST = verdict.deciding, verdict.first_change


def _lossless_ratio_decides(ev) -> str:
    """Wrong: a relaxed miss said to be decided by the papers' min(1, q/p) rather than by b's excess over it."""
    name = _DECIDING(ev)
    return "min(1, q/p)" if name == "b" else name


def _one_past(trace):
    """Wrong: the first departure itself read as after it (its AR token withheld, its x* called this run's own)."""
    f = _FIRST(trace)
    return None if f is None else f - 1


KEYED = (tiny_keyed_race_says_what_is_true,)
VARIANTS = [
    Mutant("keyed-plain-names-J/p-as-deciding-a-relaxed-keep", lambda mp: mp.setattr(verdict, "deciding",
                                                                                     lambda ev: "J/p"), KEYED),
    Mutant("keyed-plain-names-min(1,q/p)-as-deciding", lambda mp: mp.setattr(verdict, "deciding",
                                                                             _lossless_ratio_decides), KEYED),
    Mutant("keyed-plain-chance-is-b-not-its-excess", lambda mp: mp.setattr(verdict, "excess", lambda b, e: b),
           KEYED),
    Mutant("keyed-plain-says-AR-drew-x*-after-the-first-change",
           lambda mp: mp.setattr(verdict, "first_change", lambda trace: None), KEYED),
    Mutant("keyed-plain-first-change-one-early", lambda mp: mp.setattr(verdict, "first_change", _one_past), KEYED),
    Mutant("plain-says-a-relaxed-acceptance-was-thrown-away",
           lambda mp: mp.setattr(verdict, "plain", _relaxed_as_rejected), (plain_says_the_recorded_event,)),
    Mutant("plain-rounds-unlike-the-verdict",
           lambda mp: mp.setattr(verdict, "pair", lambda a, b: (f"{a:.2g}", f"{b:.2g}")),
           (plain_says_the_recorded_event,)),
]
