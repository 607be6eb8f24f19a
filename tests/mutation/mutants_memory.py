"""Mutation-check variants for the memory shown in the app (protocol: tests/support/mutants.py)."""
from __future__ import annotations

from specviz.app import race as race_mod
from specviz.core import memory
from specviz.render import html
from tests.app.test_memory_shown import lanes_and_status_show_the_measured_peak
from tests.support.mutants import Mutant

_real_line = html.memory_line


def _advance_in_use(self) -> None:
    """Wrong: a lane records the memory in use after its forward, not the peak during it."""
    self.last = next(self.gen)
    self.peak = max(self.peak, memory.memory_in_use(self.device))


def _status_in_use_as_peak(used):
    """Wrong: the status line's peak is the memory in use."""
    return _real_line(None if used is None else (used[0], used[0], used[2]))


VARIANTS = [
    Mutant("lane-shows-in-use-not-peak", lambda mp: mp.setattr(race_mod._Lane, "advance", _advance_in_use),
           (lanes_and_status_show_the_measured_peak,)),
    Mutant("status-shows-in-use-as-peak", lambda mp: mp.setattr(html, "memory_line", _status_in_use_as_peak),
           (lanes_and_status_show_the_measured_peak,)),
    Mutant("cpu-peak-worded-as-the-runs", lambda mp: mp.setattr(html, "peak_words", lambda cuda: "peak"),
           (lanes_and_status_show_the_measured_peak,)),
    Mutant("lane counters join a number and its unit with a plain space (\"5.83\" / \"s\" wrap apart)",
           lambda mp: mp.setattr(html, "NBSP", " "), (lanes_and_status_show_the_measured_peak,)),
]
