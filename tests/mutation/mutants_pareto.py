"""Wrong variants of the sweep's trade-off plot (specviz/analysis/front.py, drawn by specviz/render/pareto.py)."""
import statistics

from specviz.analysis import bench, front
from specviz.render import pareto
from tests.render.test_pareto import test_bars_are_the_standard_errors_of_the_per_image_values as bars_are_se
from tests.render.test_pareto import test_front_is_exactly_the_undominated_swept_points as front_exact
from tests.render.test_pareto import test_labels_never_overlap_each_other_or_a_marker as labels_clear
from tests.render.test_pareto import (
    test_the_front_is_cut_where_points_lie_within_their_errors_and_a_note_says_so as front_cut,
)
from tests.support.mutants import Mutant

_FRONT = front.front


def _every_swept_point(pts, higher=False):
    """the line joins every swept point by speed (a dominated point such as λ=2 kept on the 'front')."""
    return sorted((p for p in pts if not p.reference), key=lambda p: -p.x)


def _with_references(pts, higher=False):
    """AR and the lossless methods joined into the front."""
    return sorted(_FRONT([front.Point(p.label, p.x, p.y, p.method, False) for p in pts]), key=lambda p: -p.x)


def _one_error_only(a, b):
    """the costs compared against one point's error, not the two combined."""
    return abs(a.y - b.y) > a.se


def _se_as_stdev(r, k):
    """the spread of the per-image values drawn as the error of their mean (no 1/√n)."""
    return round(statistics.stdev(x[k] for x in r), 4) if len(r) > 1 else 0.0


VARIANTS = [
    Mutant("pareto: one point's error only", lambda mp: mp.setattr(front, "separable", _one_error_only),
           (front_cut,)),
    Mutant("pareto: standard deviation for standard error", lambda mp: mp.setattr(bench, "_se", _se_as_stdev),
           (bars_are_se,)),
    Mutant("pareto: every swept point on the front", lambda mp: mp.setattr(front, "front", _every_swept_point),
           (front_exact,)),
    Mutant("pareto: references on the front", lambda mp: mp.setattr(front, "front", _with_references),
           (front_exact,)),
    Mutant("pareto: labels at a fixed offset", lambda mp: mp.setattr(pareto, "OFFSETS", [(8, 6)]), (labels_clear,)),
]
