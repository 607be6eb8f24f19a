"""The draft tree picture against the trace it draws: nodes, edges, accepted path, CASCADE's I and C links and the
level budgets are exactly the recorded ones (read here straight from the raw step records), for sd and cascade on
the toy target, on the embedded scenes model and on the tiny Janus target with a draft model; and the picture draws
each node in its decision's colour and each kind of link in its own colour."""
from __future__ import annotations

import html
import itertools
from functools import lru_cache

import numpy as np
import pytest
import torch

from specviz.core.records import Groups
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from specviz.render import tree_picture as tp
from tests.support.toy import toy

JUDGED = ("exact", "relaxed", "rejected")


@lru_cache(maxsize=1)
def toy_traces() -> tuple:
    torch.set_num_threads(1)
    model, factory = toy(codes=12, grid=4, seed=5)
    return tuple(drain(decode(model, RunConfig(method=m, prompt="red house", seed=s, tree_depth=3, tree_topk=3,
                                               tree_nodes=8, tau_pos=0.3, tau_seq=0.3, cascade_budget=0.5),
                              factory)).trace for m in ("sd", "cascade") for s in (0, 1))


def expected(trace, step: int) -> dict:
    """What the picture must show, from the raw records of trace.steps[step]."""
    st = trace.steps[step]
    judged = {e.node: e for e in st.events if e.decision in JUDGED}
    accepted = [n for n, e in sorted(judged.items(), key=lambda kv: kv[1].level) if e.decision != "rejected"]
    sampled = [e for e in st.events if e.decision in ("resampled", "bonus")]
    last = ([0] + accepted)[-1]
    focus = tuple(accepted) or ((max(judged, key=lambda n: (judged[n].level, n)),) if judged else ())
    ext = {n: e.groups or Groups() for n, e in judged.items()}
    budget = max((g.budget_left for g in ext.values()), default=0.0) or None
    levels = {}
    for e in judged.values():
        assert levels.setdefault(e.level, e.tv_cost) == e.tv_cost      # one cost per level (its whole walk)
    return {"nodes": {0} | {d.node for d in st.drafted} | ({tp.SAMPLED} if sampled else set()),
            "edges": {(d.parent, d.node) for d in st.drafted} | ({(last, tp.SAMPLED)} if sampled else set()),
            "path": tuple([0] + accepted + ([tp.SAMPLED] if sampled else [])),
            "I": {(n, m) for n in focus for m in ext[n].interchangeable},
            "C": {(n, m) for n in focus for m in ext[n].convergent},
            "levels": {lv: (c, c / budget if budget else None) for lv, c in levels.items()},
            "decisions": {n: e.decision for n, e in judged.items()}}


def check_trace(trace) -> int:
    """Every tree step's layout equals the records; returns how many I and C links were checked."""
    links = 0
    for step in range(len(trace.steps)):
        lay = tp.tree_layout(trace, step)
        if lay is None:
            assert not any(e.parent >= 0 for e in trace.steps[step].events)
            continue
        want = expected(trace, step)
        assert {n.node for n in lay.nodes} == want["nodes"]
        assert set(lay.edges) == want["edges"] and lay.path == want["path"]
        assert set(lay.links["I"]) == want["I"] and set(lay.links["C"]) == want["C"]
        assert {lc.level: (lc.tv_cost, lc.share) for lc in lay.levels} == want["levels"]
        assert {n.node: n.decision for n in lay.nodes if n.node in want["decisions"]} == want["decisions"]
        links += len(want["I"]) + len(want["C"])
    return links


def test_tree_layout_equals_the_recorded_tree_on_the_toy():
    assert sum(check_trace(t) for t in toy_traces()) > 0              # some CASCADE groups were checked


def test_the_picture_draws_decisions_and_both_link_kinds_in_their_colours():
    t = next(t for t in toy_traces() if t.method == "cascade")
    step = next(s for s in range(len(t.steps)) if (lay := tp.tree_layout(t, s)) and lay.links["I"] and lay.links["C"])
    lay = tp.tree_layout(t, step)
    a = np.asarray(tp.draw_tree(lay))
    for n in lay.nodes:                                               # the box's left border, drawn last
        assert tuple(a[n.y, n.x - tp.THUMB // 2 + 1]) == tp.node_rgb(n.decision), n
    for kind in ("I", "C"):
        assert (a == tp.LINK_RGB[kind]).all(-1).sum() > 50, kind
    sd = next(t for t in toy_traces() if t.method == "sd")
    lay_sd = next(lay for s in range(len(sd.steps)) if (lay := tp.tree_layout(sd, s)))
    b = np.asarray(tp.draw_tree(lay_sd))
    assert not lay_sd.links["I"] and not lay_sd.links["C"] and lay_sd.budget is None
    assert (b == tp.LINK_RGB["I"]).all(-1).sum() == 0                 # no links, and the legend is HTML, not here


@pytest.mark.slow
def test_tree_picture_on_scenes_and_the_tiny_janus_target(tmp_path):
    from specviz.engine.drafters import drafter_factory
    from specviz.models import load_model
    from specviz.models.runner import run
    from tests.support.janus_tiny import tiny_pair
    scenes = load_model("scenes")
    t = drain(decode(scenes, RunConfig(method="cascade", prompt="a red house", seed=0),
                     drafter_factory(scenes))).trace
    assert check_trace(t) > 0
    target, draft = tiny_pair(tmp_path)
    tm, dm = load_model(target, "cpu"), load_model(draft, "cpu")
    for method in ("sd", "cascade"):
        tj = run(RunConfig(model=target, method=method, prompt="a red house", seed=1, tree_depth=3, tau_pos=0.3),
                 model=tm, draft_model=dm)
        check_trace(tj)
        assert any(tp.tree_layout(tj, s) for s in range(len(tj.steps)))


@pytest.mark.parametrize("method", ["ar", "sjd", "csd"])
def test_chain_methods_draw_no_tree(method):
    model, factory = toy(codes=12, grid=3, seed=5)
    t = drain(decode(model, RunConfig(method=method, prompt="red house", seed=0), factory)).trace
    assert all(tp.tree_layout(t, s) is None for s in range(len(t.steps)))


BOX_WORDS = {"root": "root", "": "never judged", "exact": "accepted exactly", "relaxed": "accepted by relaxation",
             "rejected": "rejected", "resampled": "resampled", "bonus": "bonus"}


def tree_pictures():
    """(layout, its picture) of every tree step of the toy traces."""
    for t in toy_traces():
        for s in range(len(t.steps)):
            if (lay := tp.tree_layout(t, s)) is not None:
                yield lay, np.asarray(tp.draw_tree(lay))


def test_the_legend_names_every_box_colour_and_both_links_the_picture_draws():
    kinds = set()
    for lay, a in tree_pictures():
        items = tp.legend(lay)
        boxes = {it.rgb: it.text for it in items if it.kind == "box"}
        drawn = {n.decision for n in lay.nodes}
        assert set(boxes) == {tp.node_rgb(d) for d in drawn}                   # every colour drawn, no other
        for d in drawn:
            assert BOX_WORDS[d] in boxes[tp.node_rgb(d)], (d, boxes)
        lines = [it for it in items if it.kind == "line"]
        assert [it.rgb for it in lines] == [tp.LINK_RGB["I"], tp.LINK_RGB["C"], tp.PATH_RGB]
        assert "same level" in lines[0].text and "consecutive levels" in lines[1].text
        page = tp.legend_html(lay)                                               # each swatch in its colour, in order
        at = [page.index("rgb({}, {}, {})".format(*it.rgb)) for it in items]
        assert at == sorted(at) and all(html.escape(it.text) in page for it in items)
        assert a.shape[0] == max(n.y for n in lay.nodes) + tp.THUMB // 2 + tp.PAD   # the picture is the tree only
        kinds |= drawn
    assert {"root", "exact", "rejected", ""} <= kinds                          # the toy shows the common kinds


# the room for the tree in Present mode at the smallest lecture-hall screen, 1920x1080 at 150 % (a 1280x720 CSS
# viewport): measured in Chromium on 2026-12-05 (tests/browser/test_browser_replay_present.py, measure(): "room"),
# the tab's width less the picture's least (app/replay_fit.MIN_PICTURE) and a gap, and the height under the tab bar
# less the legend's three lines
LECTURE_BOX = (964, 527)


@lru_cache(maxsize=1)
def page_traces() -> tuple:
    """CASCADE and SD with the app's defaults on the browser tests' served model (tiny_backend(codes=16, grid=12))."""
    model, factory = toy(codes=16, grid=12)
    return tuple(drain(decode(model, RunConfig(method=m), factory)).trace for m in ("cascade", "sd"))


def page_tree_layouts() -> list:
    """Every tree step's layout of page_traces (laid out now: the geometry is read when a layout is made)."""
    return [lay for t in page_traces() for s in range(len(t.steps)) if (lay := tp.tree_layout(t, s)) is not None]


def test_a_tree_at_16_px_fits_a_lecture_hall_screen():
    """Shown with its text at 16 CSS px, every tree of the page's runs fits the tree's box at 1280x720."""
    lays = page_tree_layouts()
    assert len(lays) > 100
    for lay in lays:
        w, h = tp.shown_size(lay, 16)
        assert w <= LECTURE_BOX[0] and h <= LECTURE_BOX[1], (lay.step, w, h)
    assert tp.shown_size(lays[0], 32) == tuple(2 * x for x in tp.shown_size(lays[0], 16))


def test_links_within_one_level_are_drawn_apart():
    """Several I links from one node: each an arc of its own whose apex lies further out the more rows it spans
    (nested, not one merged line), drawn in the I colour at that apex."""
    apart = 0
    for lay, a in tree_pictures():
        same = [(n, m) for n, m in lay.links["I"] if lay.node(n).level == lay.node(m).level]
        for n, m in same:
            x, y = tp.link_points(lay, n, m)[2:4]
            assert x < lay.node(n).x - tp.THUMB // 2 - 10                         # out to the left of the boxes
            near = a[y - 1:y + 2, x - 1:x + 2].reshape(-1, 3)
            assert (near == tp.LINK_RGB["I"]).all(-1).any(), (n, m)
        for (n1, m1), (n2, m2) in itertools.combinations(same, 2):
            if n1 != n2:
                continue
            d1, d2 = lay.node(m1).y - lay.node(n1).y, lay.node(m2).y - lay.node(n2).y
            if d1 * d2 > 0:                                                       # on the same side of the node
                x1, x2 = tp.link_points(lay, n1, m1)[2], tp.link_points(lay, n2, m2)[2]
                assert abs(x1 - x2) >= 10, (n1, m1, m2)
                apart += 1
    assert apart > 0
