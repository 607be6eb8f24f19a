"""Mutation-check variants for Present mode's one-lane maps (protocol: tests/support/mutants.py)."""
from __future__ import annotations

from specviz.app import follow
from tests.app.test_present_maps import maps_follow_the_inspected_lane
from tests.support.mutants import Mutant

VARIANTS = [
    Mutant("present-maps-ignore-the-inspected-lane", lambda mp: mp.setattr(follow, "_inspected_lane",
                                                                            lambda st, shown: None),
           (maps_follow_the_inspected_lane,)),
]
