"""The Replay tab keeps its picture in step with its clock while playing (app/replay_tab.py): each Play tick returns
the clock's new value together with that value's picture and caption (one update), and the clock's change event
draws nothing while playing (drawing there too queued one picture per tick behind the clock). Handler level, on a
cached toy race; plain functions, so tests/mutation/mutants_replay.py can call them as detectors."""
from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from specviz.analysis.cards import cards
from specviz.app.handlers import RunState
from specviz.app.replay_tab import PAUSE, PLAY, Replay, frame_size
from specviz.render import video
from tests.render.test_replay import race


class NoModel:
    """A backend that offers no model: the replay draws drafts as outlines (video.OUTLINE)."""
    def load(self, name):
        raise LookupError(name)


@lru_cache(maxsize=1)
def replay() -> tuple:
    traces, images, _ = race()
    return Replay(NoModel()), RunState("toy", "red house", traces, images)


def clock_of(caption: str) -> int:
    return int(re.match(r"\*\*Clock: target forward (\d+) of \d+\.\*\*", caption).group(1))


def test_every_play_tick_sends_the_new_clock_with_its_own_picture():
    r, st = replay()
    total = video.slowest(st.traces)
    on = r.play({"state": st, "replay_method": "sd", "replay_step": 0, "replay_playing": False})
    assert on["replay_playing"] is True and on["replay_play"] == PAUSE
    k, seen = 0, 0
    while True:
        upd = r.tick({"state": st, "replay_method": "sd", "replay_step": k})
        if "replay_step" not in upd:
            break
        k = upd["replay_step"]
        want = video.draw_frame(st.traces, st.images, k, video.lane_labels(st.traces, cards()), size=frame_size(st),
                                drafts=video.OUTLINE)
        assert np.array_equal(np.asarray(upd["replay_image"]), want), k        # the picture of the new clock
        assert clock_of(upd["replay_caption"]) == k, k                           # the caption of the same one
        seen += 1
    assert k == total and seen == len(video.clock(st.traces)) - 1 and upd["replay_play"] == PLAY   # stopped at T


def test_the_clocks_change_draws_nothing_while_playing_and_draws_when_paused():
    r, st = replay()
    assert r.scrub({"state": st, "replay_method": "sd", "replay_step": 3, "replay_playing": True}) == {}
    paused = r.scrub({"state": st, "replay_method": "sd", "replay_step": 3, "replay_playing": False})
    assert clock_of(paused["replay_caption"]) == 3
    want = video.draw_frame(st.traces, st.images, 3, video.lane_labels(st.traces, cards()), size=frame_size(st),
                            drafts=video.OUTLINE)
    assert np.array_equal(np.asarray(paused["replay_image"]), want)
    again = r.play({"state": st, "replay_method": "sd", "replay_step": video.slowest(st.traces),
                    "replay_playing": False})
    assert again["replay_step"] == 0 and clock_of(again["replay_caption"]) == 0    # Play at T restarts, drawn at 0


def test_control_labels_need_no_emoji_font():
    """Every button label (app.py, specviz/app/) and the Play / Pause words are drawn by an ordinary font: each
    character is in DejaVu Sans and none comes from the symbol blocks (U+2300 on: media keys, shapes, dingbats,
    emoji) that browsers draw from an emoji font when one is installed, and as an empty box when not (⏸)."""
    from pathlib import Path  # only this test reads sources

    import matplotlib  # its bundled DejaVu Sans is the font the pictures use too
    from fontTools.ttLib import TTFont  # matplotlib's own dependency: the font's character map
    cmap = TTFont(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf").getBestCmap()
    root = Path(__file__).resolve().parents[2]
    labels = [PLAY, PAUSE]
    for f in [root / "app.py", *sorted((root / "specviz" / "app").glob("*.py"))]:
        labels += re.findall(r'gr\.Button\(\s*"([^"]*)"', f.read_text())
    assert len(labels) > 8
    bad = {lab: [c for c in lab if ord(c) not in cmap or ord(c) >= 0x2300] for lab in labels}
    assert not {lab: cs for lab, cs in bad.items() if cs}
    assert [c for c in "⏸ Pause" if ord(c) not in cmap] == ["⏸"]                  # the old label fails the rule
