"""The inspected cell, ringed in every lane's image and every map: checked against the position the
inspector describes, panel by panel, pixel by pixel — the ring sits exactly on that cell and nothing else changed."""
from functools import lru_cache

import numpy as np
from PIL import Image

from specviz.analysis import views
from specviz.analysis.cards import cards
from specviz.app import follow
from specviz.app.configs import make_configs
from specviz.app.handlers import Handlers, RunState
from specviz.app.race import RACE_PX, race
from specviz.engine.registry import METHODS
from specviz.render import draw, focus, panels
from tests.support.apptools import RACE_KW, knob_inputs, tiny_backend


@lru_cache(maxsize=1)
def finished() -> RunState:
    """A finished run of ar, csd and cascade on the tiny model (a 4x4 grid)."""
    _, slow, factory = tiny_backend()
    fr = list(race(slow, factory, make_configs(["ar", "csd", "cascade"], **RACE_KW)))[-1]
    return RunState("scenes", RACE_KW["prompt"], fr.traces, fr.images)


def ringed_at(marked: Image.Image, plain: Image.Image, corners, grid, c: int, pos: int) -> None:
    """`marked` differs from `plain` only on the ring around cell `pos` of each grid picture whose top-left corner is
    in `corners` (cells of c px): the cell's edge band is RING_IN, the band around it RING_OUT, the inside untouched."""
    a, b = np.asarray(marked.convert("RGB")).astype(int), np.asarray(plain.convert("RGB")).astype(int)
    assert a.shape == b.shape
    w = focus.ring_px(c)
    r, col = divmod(pos, grid[1])
    ring = np.zeros(a.shape[:2], bool)
    for corner in corners:
        x0, y0 = corner[0] + col * c, corner[1] + r * c
        ring[max(0, y0 - w):y0 + c + w, max(0, x0 - w):x0 + c + w] = True
        ring[y0 + w:y0 + c - w, x0 + w:x0 + c - w] = False                    # the cell's inside shows through
        assert (a[y0, x0:x0 + c] == focus.RING_IN).all() and (a[y0 + c - 1, x0:x0 + c] == focus.RING_IN).all()
        assert (a[y0:y0 + c, x0] == focus.RING_IN).all() and (a[y0:y0 + c, x0 + c - 1] == focus.RING_IN).all()
        if y0 - 1 >= corner[1]:
            assert (a[y0 - 1, x0:x0 + c] == focus.RING_OUT).all()
    changed = (a != b).any(-1)
    assert not (changed & ~ring).any(), f"pixels changed away from the ring of position {pos}"


def lanes_and_maps_ring_the_inspected_cell() -> None:
    """After a click on csd's cell 6, every lane and every panel of every map rings cell 6; the other cells are
    untouched (the detector of the mutation check)."""
    st = finished()
    grid = (4, 4)
    for pos in (6, 9):
        cell = follow.inspecting(st.traces["csd"], pos, st.cards)[1]
        upd = follow.outlined({"state": st, "focus": cell, "opacity": 1.0})
        assert set(upd) == {*(f"img_{m}" for m in METHODS), *views.map_outputs()}   # no skips
        assert all(upd[f"img_{m}"] is None for m in METHODS if m not in st.traces)
        for m in st.traces:
            plain = panels.race_frame(Image.fromarray(st.images[m]), np.ones(grid, bool), grid, RACE_PX)
            ringed_at(upd[f"img_{m}"], plain, [(0, 0)], grid, draw.cell_px(grid, RACE_PX), pos)
        for kind in views.MAPS:
            plain = panels.heatmap(kind, st.traces, st.images, 1.0, cards=cards())
            methods, px = panels.map_layout(kind, st.traces, cards=cards())
            ringed_at(upd[views.MAPS[kind].output], plain, draw.layout(len(methods), px), grid, draw.cell_px(grid, px),
                      pos)


def test_lanes_and_maps_ring_the_inspected_cell():
    lanes_and_maps_ring_the_inspected_cell()


def test_the_ring_sits_on_any_cell_of_any_grid():
    for grid, px in (((4, 4), 240), ((16, 16), 240), ((24, 24), 480), ((3, 5), 240)):
        plain = draw.upscale(np.full((*grid, 3), 90, np.uint8), grid, px)
        c = draw.cell_px(grid, px)
        for pos in (0, grid[1] - 1, grid[0] * grid[1] - 1, grid[1] + 1):
            ringed_at(focus.outline(plain, pos, grid), plain, [(0, 0)], grid, c, pos)


def test_nothing_inspected_nothing_ringed_and_the_opacity_keeps_the_ring():
    st = finished()
    assert follow.outlined({"state": st, "focus": None, "opacity": 1.0}) == {}
    assert follow.outlined({"state": RunState(), "focus": follow.Cell("ar", 3), "opacity": 1.0}) == {}
    assert follow.outlined({"state": st, "focus": follow.Cell("ar", 99), "opacity": 1.0}) == {}     # off the grid
    h = Handlers(tiny_backend()[0])
    faded = h.maps({"state": st, "opacity": 0.5, "focus": follow.Cell("ar", 3)})["map_tv"]
    plain = panels.heatmap("tv", st.traces, st.images, 0.5, cards=cards())
    ringed_at(faded, plain, draw.layout(3), (4, 4), draw.cell_px((4, 4)), 3)


def test_a_lane_without_an_image_keeps_its_note():
    st = finished()
    partial = RunState(st.model, st.prompt, st.traces, {m: im for m, im in st.images.items() if m != "csd"})
    upd = follow.outlined({"state": partial, "focus": follow.Cell("ar", 3), "opacity": 1.0})
    note = draw.message(f"csd: no image ({st.traces['csd'].model} not decoded here)")
    assert upd["img_csd"].tobytes() == note.tobytes() and "img_ar" in upd and "map_entropy" in upd


def test_a_run_rings_the_focused_cell_and_the_inspector_follows_without_skips():
    """The next run draws its final lanes and maps with the cell kept in `focus` ringed; with nothing inspected the
    inspector keeps its own value (a value, not gr.skip())."""
    h = Handlers(tiny_backend()[0])
    st = finished()
    shown, cell = follow.inspecting(st.traces["csd"], 9, st.cards)
    final = list(h.generate(knob_inputs(["ar", "csd"], **{k: RACE_KW[k] for k in ("prompt", "seed")}) |
                            {"focus": cell}))[-1]
    new = final["state"]
    for m in ("ar", "csd"):
        plain = panels.race_frame(Image.fromarray(new.images[m]), np.ones((4, 4), bool), (4, 4), RACE_PX)
        ringed_at(final[f"img_{m}"], plain, [(0, 0)], (4, 4), draw.cell_px((4, 4), RACE_PX), 9)
    plain = panels.heatmap("decision", new.traces, new.images, 1.0, cards=cards())
    ringed_at(final["map_decision"], plain, draw.layout(2), (4, 4), draw.cell_px((4, 4)), 9)
    unringed = list(h.generate(knob_inputs(["ar"])))[-1]["img_ar"]
    assert not (np.asarray(unringed) == focus.RING_IN).all(-1).any()
    placeholder = "<i>Token inspector: click a cell of any image or map.</i>"
    assert follow.refresh(new, None, placeholder) == (placeholder, None)
    assert follow.refresh(None, cell, shown) == (shown, cell)
    assert follow.refresh(None, None, 10 ** 30) == ("", None)     # a raw client's junk is not echoed (JSON can't)
    assert "csd · row 2, column 1 (position 9)" in follow.refresh(new, cell, shown)[0]
