"""The categorical maps stay readable for colour-blind viewers: within each map (its "none / undecided" grey
counted as a category), every two colours are at least 20 CIEDE2000 apart in normal vision and under simulated
deuteranopia, protanopia and tritanopia (colorspacious, severity 100). Before: History -> Compare's green/red 6.6
under deuteranopia, the decisions' exact/rejected 6.6 (deuteranopia) and exact/relaxed 10.8 (protanopia)."""
from __future__ import annotations

import pytest

from specviz.core.records import DECISIONS
from specviz.render import draw
from tests.support.colour import SIMULATIONS, closest_pair, delta_e2000, lab

MIN_DE = 20.0
# Sharma, Wu & Dalal (2005), Table 1: pairs 1, 7, 17, 25 of the CIEDE2000 test data
SHARMA = [((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
          ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
          ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
          ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644)]


def test_delta_e2000_matches_the_published_test_data():
    for a, b, want in SHARMA:
        assert delta_e2000(a, b) == pytest.approx(want, abs=1e-4)
        assert delta_e2000(b, a) == pytest.approx(want, abs=1e-4)


def test_the_simulation_merges_what_it_should():
    """The check can fail: deuteranopia merges the old green/red of History -> Compare (6.6), normal vision not."""
    old = ((46, 160, 67), (215, 48, 39))
    assert closest_pair(old, SIMULATIONS["deuteranopia"])[0] < 10 < closest_pair(old, None)[0]
    assert delta_e2000(lab((10, 20, 30), None), lab((10, 20, 30), None)) == 0


def palettes_stay_apart() -> None:
    pal = draw.categorical_palettes()
    assert len(pal["decisions"]) == len(DECISIONS) + 1 and pal["history compare"][:2] == draw.DIFF_RGB
    for name, colours in pal.items():
        for seen, sim in SIMULATIONS.items():
            d, i, j = closest_pair(colours, sim)
            assert d >= MIN_DE, f"{name}: colours {colours[i]} and {colours[j]} are {d:.1f} apart under {seen}"


def test_every_categorical_map_stays_apart_under_each_simulation():
    palettes_stay_apart()


def test_the_app_draws_render_s_palette():
    from specviz.app import history_tab  # the History tab's comparison picture: it draws this palette
    from specviz.render import tree_picture  # the tree's group links: the groups map's colours
    assert history_tab.DIFF_RGB == draw.DIFF_RGB
    assert tree_picture.LINK_RGB == {"I": draw.GROUP_RGB[1], "C": draw.GROUP_RGB[2]}
