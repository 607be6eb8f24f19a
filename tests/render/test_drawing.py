"""The renderer's geometry and pictures: composite layout and hit-testing, colour maps, heatmap composites, the
accepted-length bar chart (exact bar heights: tests/mutation/mutants_views.py uses it as a detector)."""
import numpy as np
from PIL import Image

from specviz.analysis import views
from specviz.analysis.cards import cards
from specviz.app.configs import make_configs
from specviz.app.race import race
from specviz.render import charts, draw, panels
from tests.support.apptools import RACE_KW as KW


def test_locate_inverts_layout():
    grid = (12, 12)
    for n in (1, 3, 4, 7):
        for i, (x0, y0) in enumerate(draw.layout(n)):
            c = draw.cell_px(grid)
            assert draw.locate(n, x0 + 3 * c + 1, y0 + 5 * c + 1, grid) == (i, 5 * 12 + 3)
    assert draw.locate(2, 0, 0, grid) is None


def test_colorize_and_heatmap_composite(race_toy):
    a = np.array([[0.0, 1.0], [np.nan, 0.5]])
    rgb = draw.colorize(a, "viridis", 0, 1)
    assert tuple(rgb[1, 0]) == draw.NAN_RGB
    assert tuple(rgb[0, 0]) == tuple(draw.lut("viridis")[0]) and tuple(rgb[0, 1]) == tuple(draw.lut("viridis")[255])
    model, factory = race_toy
    fr = list(race(model, factory, make_configs(["ar", "csd"], **KW), fps=1e9))[-1]
    for kind in views.MAPS:
        im = panels.heatmap(kind, fr.traces, fr.images, 0.5, cards=cards())
        assert isinstance(im, Image.Image) and im.size[0] > 2 * draw.PANEL


def test_bar_chart_bars_are_exactly_proportional_to_the_counts():
    """The accepted-length histogram (charts.bar_chart): each bar's pixel height is its count / the largest count of
    the plot height, at the right x slot, in its method's colour."""
    import numpy as np

    img = np.asarray(charts.bar_chart({"a": [0, 6, 3], "b": [2, 0, 1]}, "t", "x", "y", size=(640, 280)))
    left, right, top, bottom = charts.MARGINS
    ph, y0 = 280 - top - bottom, 280 - bottom
    for k, counts in enumerate(([0, 6, 3], [2, 0, 1])):
        rgb = np.array(charts.BAR_RGB[k])
        for x, c in enumerate(counts):
            slot = (640 - left - right) / 3
            col = int(left + x * slot + 0.1 * slot + k * 0.8 * slot / 2 + 0.4 * slot / 2)   # the bar's middle
            height = int((np.abs(img[:y0, col].astype(int) - rgb).sum(-1) == 0).sum())
            assert height == round(c / 6 * ph), (k, x, height)


def test_the_histogram_leaves_out_methods_that_draft_nothing(monkeypatch):
    """AR commits one token per forward: its lone bar would dwarf the others, so it is named, not drawn."""
    from types import SimpleNamespace

    from specviz.render import figures
    seen = {}
    monkeypatch.setattr(charts, "bar_chart", lambda series, title, *a, **k: seen.update(series=series, title=title))
    t = SimpleNamespace
    figures.histogram_image({"ar": t(summary={"accepted_hist": [0, 256]}),
                             "csd": t(summary={"accepted_hist": [0, 40, 30, 10]})}, cards())
    assert seen["series"] == {"csd": [0, 40, 30, 10]} and "ar left out" in seen["title"]
