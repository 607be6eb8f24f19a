"""The race (common clock, throttling, closing), the trace views and the renderer's geometry."""
import numpy as np
import pytest
from PIL import Image

from specviz.analysis import views
from specviz.app.session import make_configs, race
from specviz.core.records import Groups
from specviz.engine.config import ConfigError
from specviz.engine.decode import decode
from specviz.render import charts, draw, panels
from tests.apptools import Slow
from tests.toy import toy

KW = dict(prompt="a red house", seed=5, window=4, tree_depth=3, tree_topk=2, tau_pos=0.5, tau_seq=0.5)


@pytest.fixture(scope="module")
def setup():
    model, factory = toy(codes=8, grid=4)
    return model, factory


def test_race_matches_solo_runs_and_shares_one_clock(setup):
    model, factory = setup
    cfgs = make_configs(["cascade", "ar", "csd"], **KW)
    assert [c.method for c in cfgs] == ["ar", "csd", "cascade"]               # canonical order
    frames = list(race(model, factory, cfgs, fps=1e9))
    assert [f.tick for f in frames] == list(range(1, len(frames) + 1))        # one frame per tick unthrottled
    last = frames[-1]
    assert last.done and last.tick == 16                                      # AR needs 16 forwards on 4x4
    for cfg in cfgs:
        *_, solo = decode(model, cfg, factory)
        t = last.traces[cfg.method]
        assert t.tokens == solo.trace.tokens
        assert t.summary["target_forwards"] == solo.trace.summary["target_forwards"]
    for f in frames:                                                          # forwards never exceed the clock
        for v in f.lanes:
            assert v.forwards <= f.tick and (v.done or v.forwards == f.tick)
    assert last.images["ar"].shape[2] == 3


def test_race_throttles_but_keeps_first_and_final_frames(setup):
    model, factory = setup
    frames = list(race(model, factory, make_configs(["ar", "sjd"], **KW), fps=1e-3))
    assert len(frames) == 2 and frames[0].tick == 1 and frames[-1].done


def test_closing_the_race_stops_every_lane(setup):
    model, factory = setup
    slow = Slow(model)
    it = race(slow, factory, make_configs(["ar", "csd"], **KW), fps=1e9)
    next(it), next(it)
    seen = slow.forwards
    it.close()
    assert seen == 2 and slow.forwards == 2           # tick 1 = prefills, tick 2 = one forward each, then none
    with pytest.raises(StopIteration):
        next(it)


def test_tree_method_without_drafter_fails_clearly(setup):
    model, _ = setup
    with pytest.raises(ConfigError, match="tree drafter"):
        next(race(model, None, make_configs(["ar", "cascade"], **KW)))
    with pytest.raises(ConfigError, match="at least one method"):
        make_configs([], **KW)


def test_partial_frame_hatches_undecided_cells(setup):
    model, factory = setup
    first = next(race(model, factory, make_configs(["ar"], **KW)))
    img = np.asarray(first.lanes[0].image)
    c = draw.cell_px((4, 4))
    cell = img[c:2 * c, c:2 * c].reshape(-1, 3)                               # an undecided cell
    colours = {tuple(p) for p in cell}
    assert colours == {draw.UNDECIDED_RGB, draw.HATCH_RGB}
    decided = {tuple(p) for p in img[:c, :c].reshape(-1, 3)}                  # position 0 is committed
    assert len(decided) == 1 and decided != {draw.UNDECIDED_RGB}


def test_views_maps_and_groups(setup):
    model, factory = setup
    frames = list(race(model, factory, make_configs(["ar", "csd", "cascade"], **KW), fps=1e9))
    traces = frames[-1].traces
    for _m, t in traces.items():
        for kind in ("entropy", "finalize", "tv_cost"):
            a = views.numeric_map(t, kind)
            assert a.shape == (4, 4) and np.isfinite(a).all()
        idx, rejected = views.decision_map(t)
        n_rej = sum(ev.decision == "rejected" for st in t.steps for ev in st.events)
        assert (n_rej == 0) == (not rejected.any())
    assert np.isnan(views.numeric_map(traces["ar"], "tv")).all()            # AR judges no drafts
    cells = views.group_cells(traces["cascade"])
    assert cells and all(c.pos in range(16) for c in cells)
    for c in cells:              # paper reading: I(n) at n's level = n's cell; C(n) one level up or down = next cells
        assert set(c.interchangeable) <= {c.pos} and set(c.convergent) <= {c.pos - 1, c.pos + 1}
        last = [a.event for a in views.attempts(traces["cascade"], c.pos) if a.event.decision in views.JUDGED][-1]
        assert c.members == len(set((last.groups or Groups()).interchangeable) | set((last.groups or Groups()).convergent)) and c.node == last.node
    assert any(c.interchangeable or c.convergent for c in cells)


def test_step_view_accounts_for_every_commit(setup):
    model, factory = setup
    t = list(race(model, factory, make_configs(["csd"], **KW), fps=1e9))[-1].traces["csd"]
    total = 0
    for s in range(len(t.steps)):
        v = views.step_view(t, s)
        assert v.committed_before == total
        total = v.committed_after
        assert views.step_caption(t, v).startswith("csd · target forward")
    assert total == 16


def test_locate_inverts_layout():
    grid = (12, 12)
    for n in (1, 3, 4, 7):
        for i, (x0, y0) in enumerate(draw.layout(n)):
            c = draw.cell_px(grid)
            assert draw.locate(n, x0 + 3 * c + 1, y0 + 5 * c + 1, grid) == (i, 5 * 12 + 3)
    assert draw.locate(2, 0, 0, grid) is None


def test_colorize_and_heatmap_composite(setup):
    a = np.array([[0.0, 1.0], [np.nan, 0.5]])
    rgb = draw.colorize(a, "viridis", 0, 1)
    assert tuple(rgb[1, 0]) == draw.NAN_RGB
    assert tuple(rgb[0, 0]) == tuple(draw.lut("viridis")[0]) and tuple(rgb[0, 1]) == tuple(draw.lut("viridis")[255])
    model, factory = setup
    fr = list(race(model, factory, make_configs(["ar", "csd"], **KW), fps=1e9))[-1]
    for kind in panels.KINDS:
        im = panels.heatmap(kind, fr.traces, fr.images, 0.5)
        assert isinstance(im, Image.Image) and im.size[0] > 2 * draw.PANEL


def test_bar_chart_bars_are_exactly_proportional_to_the_counts():
    """The accepted-length histogram (charts.bar_chart): each bar's pixel height is its count / the largest count of
    the plot height, at the right x slot, in its method's colour."""
    import numpy as np

    img = np.asarray(charts.bar_chart({"a": [0, 6, 3], "b": [2, 0, 1]}, "t", "x", "y", size=(640, 280)))
    ph, y0 = 280 - 30 - 40, 280 - 40
    for k, counts in enumerate(([0, 6, 3], [2, 0, 1])):
        rgb = np.array(charts.BAR_RGB[k])
        for x, c in enumerate(counts):
            slot = (640 - 52 - 120) / 3
            col = int(52 + x * slot + 0.1 * slot + k * 0.8 * slot / 2 + 0.4 * slot / 2)   # the bar's middle
            height = int((np.abs(img[:y0, col].astype(int) - rgb).sum(-1) == 0).sum())
            assert height == round(c / 6 * ph), (k, x, height)
