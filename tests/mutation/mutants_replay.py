"""Wrong variants of the Replay tab's synchronized picture (render/video.py: the lanes at clock k with their drafts)."""
from specviz.app import replay_tab
from specviz.render import video
from tests.app.test_replay_clock import test_every_play_tick_sends_the_new_clock_with_its_own_picture as tick_exact
from tests.app.test_replay_steady import one_size_for_the_whole_replay as one_size
from tests.render.test_replay import (
    test_each_lane_is_the_films_lane_plus_its_faded_drafts_of_step_k_minus_1 as drafts_exact,
)
from tests.render.test_replay import test_lane_labels_count_forwards_as_the_race_does as labels_exact
from tests.support.mutants import Mutant

_PROPOSALS, _STATE = video.proposals, video.lane_state
_TICK = replay_tab.Replay.tick


def _tick_draws_the_old_clock(self, inputs):
    """a tick that moves the clock on but draws the value it started from (the picture one tick behind)."""
    upd = _TICK(self, inputs)
    if "replay_step" in upd:
        upd |= self.view(inputs["state"], inputs["replay_method"], int(inputs["replay_step"]))
    return upd


def _next_step(trace, step):
    """the drafts of step k (what the next forward will verify) drawn at clock k, instead of those of step k - 1."""
    return _PROPOSALS(trace, min(step + 1, len(trace.steps) - 1))


def _done_one_late(trace, k):
    """a lane called done only after its last forward (k > F), so clock F still reads "forward F"."""
    return f"forward {k}" if k == len(trace.steps) else _STATE(trace, k)


_LARGEST = replay_tab.Replay.largest


def _largest_tree_only(self, t):
    """the padding sized by the trees alone, forgetting the grid picture of a step without a tree."""
    from specviz.render import tree_picture  # only this variant needs the tree sizes
    sizes = [tree_picture.size(lay) for s in range(len(t.steps)) if (lay := tree_picture.tree_layout(t, s))]
    return (max(w for w, _ in sizes), max(h for _, h in sizes)) if sizes else _LARGEST(self, t)


VARIANTS = [
    Mutant("replay: step pictures not padded (each its own size)", lambda mp: mp.setattr(
        replay_tab, "padded", lambda pic, size: pic), (one_size,)),
    Mutant("replay: padded to the largest tree only", lambda mp: mp.setattr(
        replay_tab.Replay, "largest", _largest_tree_only), (one_size,)),
    Mutant("replay: drafts of step k drawn at clock k", lambda mp: mp.setattr(video, "proposals", _next_step),
           (drafts_exact,)),
    Mutant("replay: a lane done one forward late", lambda mp: mp.setattr(video, "lane_state", _done_one_late),
           (labels_exact,)),
    Mutant("replay: a Play tick draws the clock it started from", lambda mp: mp.setattr(
        replay_tab.Replay, "tick", _tick_draws_the_old_clock), (tick_exact,)),
]
