"""Wrong variants of the inspected cell's ring (specviz/render/focus.py, specviz/app/follow.py)."""
from specviz.app import follow
from specviz.render import focus
from tests.render.test_focus import lanes_and_maps_ring_the_inspected_cell as rings
from tests.support.mutants import Mutant

_BOX, _OUTLINED = focus.cell_box, follow.outlined


def _transposed(pos, grid, c):
    """row and column swapped (a cell of a square grid ringed in its mirror image)."""
    r, col = divmod(pos, grid[1])
    return _BOX(col * grid[1] + r, grid, c)


def _clicked_lane_only(inputs):
    """only the lane that was clicked is ringed; the other lanes keep their plain image."""
    method = inputs["focus"].method
    return {k: v for k, v in _OUTLINED(inputs).items() if not k.startswith("img_") or k == f"img_{method}"}


VARIANTS = [
    Mutant("ring: row and column swapped", lambda mp: mp.setattr(focus, "cell_box", _transposed), (rings,)),
    Mutant("ring: the clicked lane only", lambda mp: mp.setattr(follow, "outlined", _clicked_lane_only), (rings,)),
]
