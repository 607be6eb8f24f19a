"""Wrong variants of the sweep's trade-off plot (specviz/render/pareto.py)."""
from specviz.render import pareto
from tests.render.test_pareto import test_front_is_exactly_the_undominated_swept_points as front_exact
from tests.render.test_pareto import test_labels_never_overlap_each_other_or_a_marker as labels_clear
from tests.support.mutants import Mutant

_FRONT = pareto.front


def _every_swept_point(pts):
    """the line joins every swept point by speed (a dominated point such as λ=2 kept on the 'front')."""
    return sorted((p for p in pts if not p.reference), key=lambda p: -p.x)


def _with_references(pts):
    """AR and the lossless methods joined into the front."""
    return sorted(_FRONT([pareto.Point(p.label, p.x, p.y, p.method, False) for p in pts]), key=lambda p: -p.x)


VARIANTS = [
    Mutant("pareto: every swept point on the front", lambda mp: mp.setattr(pareto, "front", _every_swept_point),
           (front_exact,)),
    Mutant("pareto: references on the front", lambda mp: mp.setattr(pareto, "front", _with_references),
           (front_exact,)),
    Mutant("pareto: labels at a fixed offset", lambda mp: mp.setattr(pareto, "OFFSETS", [(8, 6)]), (labels_clear,)),
]
