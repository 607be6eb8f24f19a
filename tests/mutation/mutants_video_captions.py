"""Wrong variants of the race video's lane captions (render/video.py, render/frame_layout.py)."""
from specviz.render import video
from tests.render.test_video import test_the_last_frame_shows_every_lanes_step_compression_whole as captions_whole
from tests.support.mutants import Mutant

_LINE, _WRAP = video.lane_line, video.wrap


def _compression_one_late(trace, k, changed=None):
    """the step compression shown only after the lane's last forward (k > F), so the slowest lane never shows it."""
    return _LINE(trace, k if k > len(trace.steps) else min(k, len(trace.steps) - 1), changed)


def _one_line(text, width, size=20, bold=False):
    """the caption as one line, as wide as it comes (it runs past its lane)."""
    return (text,)


def _layout_without_captions(traces):
    """the lanes laid out for one caption line whatever the captions say (wrapped lines run into the image)."""
    return None


VARIANTS = [
    Mutant("video: step compression only after the last forward", lambda mp: mp.setattr(
        video, "lane_line", _compression_one_late), (captions_whole,)),
    Mutant("video: caption drawn as one unwrapped line", lambda mp: mp.setattr(video, "wrap", _one_line),
           (captions_whole,)),
    Mutant("video: lanes laid out ignoring their captions", lambda mp: mp.setattr(
        video, "final_captions", _layout_without_captions), (captions_whole,)),
]
