"""Present mode draws each map for one lane — the inspected cell's method, else the run's first relaxed one (a
record's property: drafts and not lossless; else its first drafting one) — so the map's labels
stay large at any method count (follow.map_lane): the one panel is the full composite's panel for that method
(same shared scale, same pixels), a click on it inspects that method's cell, and a click on a lane switches the maps
to that lane. Outside Present mode every lane has its panel."""
import gradio as gr
import numpy as np
import pytest

from specviz.analysis import views
from specviz.analysis.cards import cards
from specviz.app.configs import make_configs
from specviz.app.follow import Cell, map_lane, outlined
from specviz.app.handlers import Handlers, RunState
from specviz.app.race import race
from specviz.render import draw, panels
from tests.support.apptools import tiny_backend

GRID = (4, 4)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    backend, slow, factory = tiny_backend()
    cfgs = make_configs(["ar", "sjd", "csd", "cascade"], prompt="a red house", seed=2, window=4, tree_depth=3,
                        tree_topk=2, tau_pos=0.5, tau_seq=0.5)
    fr = list(race(slow, factory, cfgs))[-1]
    return Handlers(backend, str(tmp_path_factory.mktemp("exp"))), RunState("scenes", "x", fr.traces, fr.images)


def test_the_lane_is_the_inspected_one_in_present_mode_only(run):
    _, st = run
    csd = Cell("csd", 5)
    assert map_lane(st, csd, False) is None
    assert map_lane(st, csd, True) == "csd"
    assert map_lane(st, None, True) == "csd"                        # nothing inspected: the first relaxed lane
    gone = Cell("gsd", 5)
    assert map_lane(st, gone, True) == "csd"                        # a method not in this run


@pytest.mark.parametrize("kind", tuple(views.MAPS))
def test_one_panel_is_the_full_composites_panel(run, kind):
    _, st = run
    full = panels.heatmap(kind, st.traces, st.images, 1.0, cards=cards())
    shown, px = panels.map_layout(kind, st.traces, cards=cards())
    want = "csd" if "csd" in shown else shown[0]
    one = panels.heatmap(kind, st.traces, st.images, 1.0, only="csd", cards=cards())
    assert panels.map_layout(kind, st.traces, "csd", cards=cards()) == ([want], px)
    assert one.size[0] < full.size[0] or len(shown) == 1
    i = shown.index(want)
    x, y = draw.layout(len(shown), px)[i]
    x1, y1 = draw.layout(1, px)[0]
    assert np.array_equal(np.asarray(one)[y1:y1 + px, x1:x1 + px], np.asarray(full)[y:y + px, x:x + px]), kind


def test_a_click_on_the_one_panel_inspects_its_lane(run):
    h, st = run
    focus = Cell("csd", 0)
    (x0, y0), c = draw.layout(1)[0], draw.cell_px(GRID)
    evt = gr.SelectData(None, {"index": [x0 + 2 * c + 1, y0 + c + 1], "value": None})
    assert "csd · row 1, column 2 (position 6)" in h.inspect_map("entropy")(st, focus, True, evt)[0]
    assert "ar · row 1, column 2 (position 6)" in h.inspect_map("entropy")(st, focus, False, evt)[0]


def test_a_lane_click_switches_the_maps_to_that_lane(run):
    _, st = run
    clicked = Cell("sjd", 6)
    out = outlined({"state": st, "focus": clicked, "opacity": 1.0, "present": True})
    want = panels.heatmap("tv", st.traces, st.images, 1.0, 6, "sjd", cards=cards())
    assert np.array_equal(np.asarray(out["map_tv"]), np.asarray(want))
    every = outlined({"state": st, "focus": clicked, "opacity": 1.0, "present": False})
    assert every["map_tv"].size[0] > out["map_tv"].size[0]


def test_toggling_present_mode_redraws_the_maps_and_keeps_the_state(run):
    h, st = run
    shown = Cell("cascade", 3)
    on = h.maps({"state": st, "opacity": 1.0, "focus": shown, "present": True})
    off = h.maps({"state": st, "opacity": 1.0, "focus": shown, "present": False})
    assert on["present_on"] is True and off["present_on"] is False
    assert np.array_equal(np.asarray(on["map_entropy"]),
                          np.asarray(panels.heatmap("entropy", st.traces, st.images, 1.0, 3, "cascade", cards=cards())))
    assert off["map_entropy"].size[0] > on["map_entropy"].size[0]


def maps_follow_the_inspected_lane():
    """Detector (tests/mutation/mutants_present.py): in Present mode a click on sjd's cell draws sjd's panel."""
    _, slow, factory = tiny_backend()
    cfgs = make_configs(["ar", "sjd", "csd"], prompt="a red house", seed=2, window=4)
    fr = list(race(slow, factory, cfgs))[-1]
    st = RunState("scenes", "x", fr.traces, fr.images)
    clicked = Cell("sjd", 6)
    assert map_lane(st, clicked, True) == "sjd"
    out = outlined({"state": st, "focus": clicked, "opacity": 1.0, "present": True})
    assert np.array_equal(np.asarray(out["map_tv"]),
                          np.asarray(panels.heatmap("tv", st.traces, st.images, 1.0, 6, "sjd", cards=cards())))


def test_maps_follow_the_inspected_lane():
    maps_follow_the_inspected_lane()


def maps_open_on_the_first_relaxed_lane():
    """Detector (tests/mutation/mutants_present.py): before any click the maps draw the run's first method whose
    record relaxes, whatever its place; a run without one, its first drafting method; AR alone, AR."""
    from types import SimpleNamespace
    c = cards()
    relaxed = [m for m in c if c[m].drafts and not c[m].lossless]
    lossless = [m for m in c if c[m].drafts and c[m].lossless]
    assert len(relaxed) >= 2 and len(lossless) >= 2, (relaxed, lossless)
    for order in (["ar", *lossless, *relaxed], ["ar", relaxed[1], *lossless, relaxed[0]], [*lossless, "ar"]):
        st = SimpleNamespace(traces=dict.fromkeys(order), cards=c)
        want = next((m for m in order if m in relaxed), next(m for m in order if m != "ar"))
        assert map_lane(st, None, True) == want, order
        assert map_lane(st, None, False) is None
    assert map_lane(SimpleNamespace(traces={"ar": None}, cards=c), None, True) == "ar"


def test_maps_open_on_the_first_relaxed_lane():
    maps_open_on_the_first_relaxed_lane()
