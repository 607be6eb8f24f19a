"""Mutation-check variants for the inspector's plain-words line (protocol: tests/support/mutants.py)."""
from __future__ import annotations

from dataclasses import replace

from specviz.render import verdict
from tests.render.test_plain import plain_says_the_recorded_event
from tests.support.mutants import Mutant

_PLAIN = verdict.plain


def _relaxed_as_rejected(ev) -> str:
    """Wrong: only exactly accepted drafts called kept (a relaxed acceptance said as thrown away)."""
    return _PLAIN(replace(ev, decision="rejected") if ev.decision == "relaxed" else ev)


VARIANTS = [
    Mutant("plain-says-a-relaxed-acceptance-was-thrown-away",
           lambda mp: mp.setattr(verdict, "plain", _relaxed_as_rejected), (plain_says_the_recorded_event,)),
    Mutant("plain-rounds-unlike-the-verdict",
           lambda mp: mp.setattr(verdict, "pair", lambda a, b: (f"{a:.2g}", f"{b:.2g}")),
           (plain_says_the_recorded_event,)),
]
