"""The History tab's handlers: two runs at different λ give two runs' rows equal to their traces' rows, the pinned
run is marked, the comparison shows both runs' images and exactly the cells whose decisions differ, and bad picks
are one clear error."""
import gradio as gr
import numpy as np
import pytest

from specviz.analysis import history as hist
from specviz.analysis.cards import cards
from specviz.app import history_tab
from specviz.app.handlers import Handlers, RunState
from specviz.render import draw
from tests.support.apptools import knob_inputs, tiny_backend


@pytest.fixture(scope="module")
def two_runs():
    backend, _, _ = tiny_backend(codes=8, grid=6)
    h = Handlers(backend)
    states = []
    for lam in (0.0, 3.0):
        *_, last = h.generate(knob_inputs(["ar", "csd"], lam=lam, delta=0.9))
        states.append(last["state"])
    return states


def test_two_runs_two_sets_of_rows_equal_to_their_traces(two_runs):
    h = None
    for st, source in zip(two_runs, ("generate", "rerun")):
        h, table, dropdown = history_tab.record(st, h, source)
    h, table, _ = history_tab.record(two_runs[1], h, "rerun")                   # the same run again: not re-added
    assert [r.number for r in h.runs] == [1, 2]
    want = [hist.row_of(t, n, src).cells() for n, st, src in ((2, two_runs[1], "rerun"), (1, two_runs[0], "generate"))
            for t in st.traces.values()]
    assert table == want                                                        # newest run first
    lam = hist.Row.HEADERS.index("λ")
    assert [r[lam] for r in table if r[2] == "csd"] == [3.0, 0.0]
    h, table = history_tab.pin(h, 1)
    assert [r[0] for r in table] == [2, 2, "1 📌", "1 📌"]


def test_compare_shows_both_images_and_the_decision_difference(two_runs):
    h = None
    for st in two_runs:
        h, *_ = history_tab.record(st, h, "generate")
    img = np.asarray(history_tab.compare(h, 1, 2, "csd"))
    (x0, y0), (x1, y1), (x2, y2) = draw.layout(3)
    c = draw.cell_px((6, 6))
    for (x, y), st in zip(((x0, y0), (x1, y1)), two_runs):
        want = np.asarray(draw.upscale(st.images["csd"], (6, 6)))
        assert np.array_equal(img[y:y + 6 * c, x:x + 6 * c], want)
    diff = hist.decision_difference(*(hist.Kept.of(st.traces["csd"]) for st in two_runs))
    drawn = img[y2 + c // 2:y2 + 6 * c:c, x2 + c // 2:x2 + 6 * c:c]
    assert np.array_equal((drawn == history_tab.DIFF_RGB[1]).all(-1), diff == 1) and (diff == 1).any()


def test_bad_picks_are_one_clear_error(two_runs):
    h, *_ = history_tab.record(two_runs[0], None, "generate")
    with pytest.raises(gr.Error, match="two run numbers"):
        history_tab.compare(h, 1, 7, "csd")
    with pytest.raises(gr.Error, match="must include"):
        history_tab.compare(h, 1, 1, "sd")
    with pytest.raises(gr.Error, match="in the history"):
        history_tab.pin(h, 9)
    h, table, view = history_tab.clear(h)
    assert table == [] and not h.rows()
    assert history_tab.record(RunState(), h, "generate")[1] == []


def test_the_inspector_follows_the_new_run_never_a_stale_record(two_runs):
    from specviz.app import follow
    from specviz.render import html
    first, second = two_runs
    shown, cell = follow.inspecting(first.traces["csd"], 7, first.cards)
    assert shown == html.inspector(first.traces["csd"], 7, cards()) and cell == follow.Cell("csd", 7)
    fresh, kept = follow.refresh(second, cell, shown)
    assert fresh == html.inspector(second.traces["csd"], 7, cards()) and fresh != shown      # the new run's record
    assert kept == cell
    gone, let_go = follow.refresh(RunState("scenes", "x", {"ar": second.traces["ar"]}, {}), cell, shown)
    assert "csd did not run" in gone and let_go is None                # no ring for a cell of no lane
    nothing = "<i>Token inspector: click a cell</i>"
    assert follow.refresh(second, None, nothing) == (nothing, None)    # its own value: a skip would leave a copy
