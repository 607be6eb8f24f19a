"""The Replay tab's synchronized picture (render/video.draw_frame with drafts): at every clock value each lane is the
race film's lane, except the cells drafted at the lane's step k - 1 and not committed, which show the drafted code's
patch faded; lane labels count forwards as the race does; the last clock value is the final images; a click maps back
to (lane, cell). Plain functions on a cached toy race, so tests/mutation/mutants_replay.py can call them as
detectors."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from specviz.analysis.patches import patches
from specviz.app import race as race_mod
from specviz.app.configs import make_configs
from specviz.render import draw, video
from tests.support.toy import toy

METHODS = ["ar", "sjd", "csd", "sd"]


@lru_cache(maxsize=1)
def race():
    """(traces, images, patch): a finished four-lane toy race and its model's code -> patch."""
    model, factory = toy(codes=12, grid=6, seed=5)
    cfgs = make_configs(METHODS, prompt="red house", seed=3, lam=0.5, delta=0.5, tree_depth=3, tree_topk=2,
                                tree_nodes=6)
    *_, last = race_mod.race(model, factory, cfgs, fps=1000)
    return last.traces, last.images, patches(model)


def drafted_tokens(trace, step: int) -> dict:
    """What the lane should show at clock step + 1, read from the trace: position -> the drafted token on the
    accepted path (a judged exact / relaxed node), else the first node drafted there."""
    st = trace.steps[step]
    accepted = {e.node for e in st.events if e.decision in ("exact", "relaxed")}
    out = {}
    for d in st.drafted:
        if d.pos not in out or d.node in accepted:
            out[d.pos] = d.token
    return out


def committed_by(trace, k: int) -> set:
    return {ev.pos for st in trace.steps[:k] for ev in st.events
            if ev.decision in ("exact", "relaxed", "resampled", "bonus", "ar")}


def cells(frame: np.ndarray, box, grid):
    """position -> the (c, c, 3) pixels of that cell of a lane."""
    c = draw.cell_px(grid, box.px)
    return {r * grid[1] + q: frame[box.y + r * c:box.y + (r + 1) * c, box.x + q * c:box.x + (q + 1) * c]
            for r in range(grid[0]) for q in range(grid[1])}


def faded(patch, token: int, c: int) -> np.ndarray:
    a = np.asarray(patch(token).convert("RGB").resize((c, c)), np.float32)
    return (a * 0.5 + 127.5).round().astype(np.uint8)


def test_each_lane_is_the_films_lane_plus_its_faded_drafts_of_step_k_minus_1():
    traces, images, patch = race()
    grid = next(iter(traces.values())).grid
    boxes = video.frame_boxes(traces)
    c = draw.cell_px(grid, boxes[0].px)
    seen = {"faded": 0, "differs": 0, "hatched": 0}
    for k in video.clock(traces):
        film, replay = video.draw_frame(traces, images, k), video.draw_frame(traces, images, k, drafts=patch)
        for box, (m, t) in zip(boxes, traces.items()):
            want = drafted_tokens(t, k - 1) if 1 <= k <= len(t.steps) else {}
            done = committed_by(t, k)
            hatch = np.asarray(draw.hatch(draw.upscale(images[m], grid, box.px), np.ones(grid, bool)))
            final = cells(np.asarray(draw.upscale(images[m], grid, box.px)), video.LaneBox(0, 0, box.px), grid)
            hatched = cells(hatch, video.LaneBox(0, 0, box.px), grid)
            got, base = cells(replay, box, grid), cells(film, box, grid)
            for pos in range(grid[0] * grid[1]):
                if pos in want and pos not in done:                 # a proposal: the drafted code's patch, faded
                    inner = got[pos][2:c - 2, 2:c - 2]
                    assert np.array_equal(inner, faded(patch, want[pos], c)[2:c - 2, 2:c - 2]), (m, k, pos)
                    assert not np.array_equal(inner, hatched[pos][2:c - 2, 2:c - 2]), (m, k, pos)
                    seen["faded"] += 1
                    if want[pos] != t.tokens[pos]:
                        assert not np.array_equal(got[pos], final[pos]), (m, k, pos)
                        seen["differs"] += 1
                else:                                               # committed or undrafted: the film's cell
                    assert np.array_equal(got[pos], base[pos]), (m, k, pos)
                    if pos not in done:
                        assert np.array_equal(got[pos], hatched[pos]), (m, k, pos)
                        seen["hatched"] += 1
    assert seen["faded"] >= 10 and seen["differs"] >= 3 and seen["hatched"] >= 100, seen


def test_the_last_clock_value_is_the_final_images():
    traces, images, patch = race()
    grid = next(iter(traces.values())).grid
    last = video.draw_frame(traces, images, video.slowest(traces), drafts=patch)
    assert video.slowest(traces) == max(len(t.steps) for t in traces.values()) == video.clock(traces)[-1]
    for box, m in zip(video.frame_boxes(traces), traces):
        c = draw.cell_px(grid, box.px)
        lane = last[box.y:box.y + c * grid[0], box.x:box.x + c * grid[1]]
        assert np.array_equal(lane, np.asarray(draw.upscale(images[m], grid, box.px))), m


def test_lane_labels_count_forwards_as_the_race_does():
    traces, _, _ = race()
    for t in traces.values():
        n = len(t.steps)
        assert [video.lane_state(t, k) for k in (0, 1, n - 1)] == ["forward 0", "forward 1", f"forward {n - 1}"]
        assert video.lane_state(t, n) == video.lane_state(t, n + 5) == f"done at forward {n}"


def test_without_a_decoder_drafts_are_outlined_over_the_hatching():
    traces, images, _ = race()
    t, grid = traces["sjd"], traces["sjd"].grid
    k = 3
    pos = min(p for p in drafted_tokens(t, k - 1) if p not in committed_by(t, k))
    box = video.frame_boxes(traces)[list(traces).index("sjd")]
    c = draw.cell_px(grid, box.px)
    got = cells(video.draw_frame(traces, images, k, drafts=video.OUTLINE), box, grid)[pos]
    film = cells(video.draw_frame(traces, images, k), box, grid)[pos]
    assert tuple(got[1, c // 2]) == video.DRAFT_RGB and not np.array_equal(got, film)
    assert np.array_equal(got[2:c - 2, 2:c - 2], film[2:c - 2, 2:c - 2])


def test_a_click_maps_back_to_its_lane_and_cell():
    traces, _, _ = race()
    grid = next(iter(traces.values())).grid
    for box, m in zip(video.frame_boxes(traces), traces):
        c = draw.cell_px(grid, box.px)
        for r, q in ((0, 0), (2, 5), (5, 1)):
            assert video.locate_lane(traces, box.x + q * c + c // 2, box.y + r * c + c - 1) == (m, r * grid[1] + q)
        assert video.locate_lane(traces, box.x - 1, box.y + 1) is None           # the gap left of the lane
        assert video.locate_lane(traces, box.x + 1, box.y - 1) is None           # the lane's label
        assert video.locate_lane(traces, box.x + c * grid[1], box.y + 1) is None
