"""Wrong variants of opening a sweep row in the race (specviz/app/sweep_tab.py open_point)."""
from specviz.app import sweep_tab
from tests.app.test_sweep_tab import test_a_clicked_row_opens_its_point_in_the_race as opens
from tests.support.mutants import Mutant

_OPEN = sweep_tab.open_point


def _knobs_kept(points, row, knobs, methods):
    """the point's method added, but the controls keep their current knob values."""
    out = _OPEN(points, row, knobs, methods)
    return {**out, **knobs}


def _method_replaces(points, row, knobs, methods):
    """the point's method replaces the selected methods instead of joining them."""
    out = _OPEN(points, row, knobs, methods)
    return {**out, "methods": [points[row][0]]}


VARIANTS = [
    Mutant("sweep row: knob values not applied", lambda mp: mp.setattr(sweep_tab, "open_point", _knobs_kept),
           (opens,)),
    Mutant("sweep row: its method replaces the selection", lambda mp: mp.setattr(sweep_tab, "open_point",
                                                                                  _method_replaces), (opens,)),
]
