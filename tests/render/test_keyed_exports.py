"""The video and the slide carry the keyed word on AR's image (paired.vs_ar_words), checked against AR's tokens of
the same traces: the video's lane captions once every lane is done, the slide's row labels."""
from functools import lru_cache

import numpy as np

from specviz.analysis import paired
from specviz.engine.config import RunConfig
from specviz.models.runner import run
from specviz.render import figures, video
from tests.support.apptools import tiny_backend

METHODS = ("ar", "sjd", "csd")


@lru_cache(maxsize=2)
def traces(noise: str = "keyed") -> dict:
    model = tiny_backend()[1].inner
    return {m: run(RunConfig(method=m, seed=5, noise=noise, lam=8.0, delta=1.0), model=model) for m in METHODS}


def expected(noise="keyed") -> dict:
    ts = traces(noise)
    if noise != "keyed":
        return {m: "" for m in METHODS}
    changed = {m: len(paired.changed_positions(list(t.tokens), list(ts["ar"].tokens))) for m, t in ts.items()}
    assert changed["sjd"] == 0 and changed["csd"] > 0                  # what this check is about
    return {"ar": "", "sjd": "identical to AR ✓", "csd": f"{changed['csd']} tokens changed vs AR"}


def test_the_words():
    assert paired.vs_ar_words("sjd", 0) == "identical to AR ✓"
    assert paired.vs_ar_words("csd", 1) == "1 token changed vs AR"
    assert paired.vs_ar_words("csd", 2) == "2 tokens changed vs AR"
    assert paired.vs_ar_words("ar", 0) == paired.vs_ar_words("csd", None) == ""


def test_the_video_s_last_frame_captions_carry_it(monkeypatch):
    line = video.lane_line
    for noise in ("keyed", "papers"):
        ts, want = traces(noise), expected(noise)
        images = {m: np.zeros((48, 48, 3), np.uint8) for m in ts}
        seen = {}
        monkeypatch.setattr(video, "lane_line", lambda t, k, c=None: seen.setdefault((t.method, k), line(t, k, c)))
        total = video.slowest(ts)
        video.draw_frame(ts, images, total - 1)
        video.draw_frame(ts, images, total)
        for m, t in ts.items():
            c = f"{t.summary['step_compression']:.2f}× step compression"
            assert seen[(m, total)] == f"done at forward {len(t.steps)} · {c}" + (
                f" · {want[m]}" if want[m] else ""), (noise, m)
            assert "AR" not in seen[(m, total - 1)]                  # not before every lane is done


def test_the_slide_s_row_labels_carry_it():
    for noise in ("keyed", "papers"):
        ts, want = traces(noise), expected(noise)
        images = {m: np.zeros((48, 48, 3), np.uint8) for m in ts}
        fig = figures.slide_figure(ts, images)
        labels = [fig.axes[r * (1 + len(figures.slide_maps()))].get_ylabel() for r in range(len(ts))]
        for (m, t), label in zip(ts.items(), labels):
            s = t.summary
            head = f"{m}\n{s['target_forwards']} fwd · {s['step_compression']:.2f}×"
            assert label == head + (f"\n{want[m]}" if want[m] else ""), (noise, m, label)


def test_history_rows_carry_the_changed_count():
    from specviz.analysis import history as hist  # the history rows: the one test here about the app's table
    for noise in ("keyed", "papers"):
        ts, want = traces(noise), expected(noise)
        h = hist.History()
        h.add(ts, {m: np.zeros((48, 48, 3), np.uint8) for m in ts}, "generate")
        at = hist.Row.HEADERS.index("changed vs AR")
        got = {r[2]: r[at] for r in h.table()}
        for m in METHODS:
            n = int(want[m].split()[0]) if "changed" in want[m] else 0 if want[m] else hist.NOT_COMPARED
            assert got[m] == n, (noise, m, got)
        assert "changed" in [f.name for f in hist.fields(hist.Row)]
