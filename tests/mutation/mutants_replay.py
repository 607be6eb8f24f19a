"""Wrong variants of the Replay tab's synchronized picture (render/video.py: the lanes at clock k with their drafts)."""
from specviz.render import video
from tests.render.test_replay import (
    test_each_lane_is_the_films_lane_plus_its_faded_drafts_of_step_k_minus_1 as drafts_exact,
)
from tests.render.test_replay import test_lane_labels_count_forwards_as_the_race_does as labels_exact
from tests.support.mutants import Mutant

_PROPOSALS, _STATE = video.proposals, video.lane_state


def _next_step(trace, step):
    """the drafts of step k (what the next forward will verify) drawn at clock k, instead of those of step k - 1."""
    return _PROPOSALS(trace, min(step + 1, len(trace.steps) - 1))


def _done_one_late(trace, k):
    """a lane called done only after its last forward (k > F), so clock F still reads "forward F"."""
    return f"forward {k}" if k == len(trace.steps) else _STATE(trace, k)


VARIANTS = [
    Mutant("replay: drafts of step k drawn at clock k", lambda mp: mp.setattr(video, "proposals", _next_step),
           (drafts_exact,)),
    Mutant("replay: a lane done one forward late", lambda mp: mp.setattr(video, "lane_state", _done_one_late),
           (labels_exact,)),
]
