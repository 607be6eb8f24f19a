"""Wrong variants of the race video's frame layout (render/frame_layout.py, render/video.py): each makes the lanes
smaller, the frame emptier or a caption cut than the brute force of tests/render/test_video_layout.py allows."""
import functools

from specviz.render import frame_layout as fl
from tests.render.test_video import test_lanes_are_a_regular_grid_inside_the_frame as in_frame
from tests.render.test_video_layout import KEYED, PLAIN, ten_lanes_captions_whole
from tests.render.test_video_layout import test_lanes_are_as_large_and_the_frame_as_full_as_any_grid_allows as best
from tests.support.mutants import Mutant

_CANDIDATES, _SIDE, _BOXES = fl.candidates, fl.side_blocks, fl._boxes.__wrapped__


def four_plain():
    best(4, PLAIN)


def ten_keyed():
    best(10, KEYED)


def _uncached(mp, name, fn):
    """Install `fn` as frame_layout's `name`, with the layout's cache bypassed (it holds the real layouts)."""
    mp.setattr(fl, name, fn)
    mp.setattr(fl, "_boxes", fl._boxes.__wrapped__)


def _one_row(n, grid, size, caps, names):
    """every lane in one row, the old 'lanes side by side' layout."""
    return (c for c in _CANDIDATES(n, grid, size, caps, names) if c[2] == n)


@functools.lru_cache(maxsize=None)
def _fixed_column(names, captions, width, style):
    """a caption beside its lane always 330 px wide (the old SIDE), whatever its lines need."""
    return [(h, 330) for h, wide in _SIDE(names, captions, min(width, 330), style)[:1] if width >= 330]


def _above_only(n, grid, size, caps, names):
    """captions only ever above the lanes."""
    return (c for c in _CANDIDATES(n, grid, size, caps, names) if not c[3])


def _nameless(n, grid, size, caps, names):
    """the lanes laid out as if their names were one short line each (a long name then wraps into the caption)."""
    return _BOXES(n, grid, size, caps, ("",) * n)


def regular_grid():
    in_frame((24, 24))


VARIANTS = [
    Mutant("video layout: every lane in one row", lambda mp: _uncached(mp, "candidates", _one_row),
           (four_plain, ten_keyed)),
    Mutant("video layout: a caption beside its lane in a fixed 330 px column",
           lambda mp: _uncached(mp, "side_blocks", _fixed_column), (four_plain, ten_keyed)),
    Mutant("video layout: captions only above the lanes", lambda mp: _uncached(mp, "candidates", _above_only),
           (four_plain, ten_keyed)),
    Mutant("video layout: the lanes' names left out of the layout", lambda mp: mp.setattr(fl, "_boxes", _nameless),
           (regular_grid, ten_lanes_captions_whole)),
]
