"""Mutation-check variants for Present mode's one-lane maps (protocol: tests/support/mutants.py)."""
from __future__ import annotations

from specviz.app import follow, present
from tests.app.test_present_maps import maps_follow_the_inspected_lane, maps_open_on_the_first_relaxed_lane
from tests.support.mutants import Mutant

_LEAD = present.lead_lane


def _lead_by_name(methods, cards) -> str:
    """Wrong: the lecture's lane picked by name (CSD when it ran) instead of by the records' lossless flag."""
    methods = list(methods)
    return "csd" if "csd" in methods else _LEAD(methods, cards)


VARIANTS = [
    Mutant("present-maps-open-on-the-first-drafting-lane", lambda mp: mp.setattr(
        follow, "lead_lane", lambda methods, cards: next((m for m in methods if cards.of(m).drafts), "ar")),
        (maps_open_on_the_first_relaxed_lane,)),
    Mutant("present-maps-open-on-a-named-lane", lambda mp: mp.setattr(follow, "lead_lane", _lead_by_name),
           (maps_open_on_the_first_relaxed_lane,)),
    Mutant("present-maps-ignore-the-inspected-lane", lambda mp: mp.setattr(follow, "_inspected_lane",
                                                                            lambda st, shown: None),
           (maps_follow_the_inspected_lane,)),
]
