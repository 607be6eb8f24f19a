"""The race as a video and the slide-ready export: frames drawn from the traces (clock, hatching, last frame = the
final images), the GIF and MP4 files (frame counts as designed), the same film from opened trace files, the zip and
the file names, the 16:9 slide figure."""
import itertools
import zipfile

import imageio.v3 as iio
import numpy as np
import pytest
from PIL import Image

from specviz.app import race as race_mod
from specviz.app.configs import make_configs
from specviz.core.trace import Trace
from specviz.render import draw, exports, video
from tests.support.toy import toy

METHODS = ["ar", "sjd", "csd", "sd"]


@pytest.fixture(scope="module")
def run():
    model, factory = toy(codes=12, grid=6, seed=5)
    cfgs = make_configs(METHODS, prompt="red house", seed=3, lam=0.5, delta=0.5, tree_depth=3, tree_topk=2,
                                tree_nodes=6)
    *_, last = race_mod.race(model, factory, cfgs, fps=1000)
    return last.traces, last.images


def _crop(frame: np.ndarray, box: video.LaneBox, trace) -> np.ndarray:
    c = draw.cell_px(trace.grid, box.px)
    return frame[box.y:box.y + c * trace.grid[0], box.x:box.x + c * trace.grid[1]]


def test_clock_runs_from_nothing_to_the_slowest_lane(run, monkeypatch):
    traces, _ = run
    slowest = max(len(t.steps) for t in traces.values())
    assert video.clock(traces) == list(range(slowest + 1))
    monkeypatch.setattr(video, "MAX_FRAMES", 7)
    ticks = video.clock(traces)
    assert ticks[0] == 0 and ticks[-1] == slowest and len(ticks) <= 8
    assert video.frame_count(traces, "gif") == len(ticks)
    assert video.frame_count(traces, "mp4") == len(ticks) + round(video.HOLD_S * video.FPS)


def test_first_frame_is_all_hatched_and_the_last_is_the_final_images(run):
    traces, images = run
    boxes = video.lane_boxes(len(traces), next(iter(traces.values())).grid)
    first, last = video.draw_frame(traces, images, 0), video.draw_frame(traces, images, video.clock(traces)[-1])
    for box, (m, t) in zip(boxes, traces.items()):
        hatched = draw.hatch(draw.upscale(images[m], t.grid, box.px), np.ones(t.grid, bool))
        assert np.array_equal(_crop(first, box, t), np.asarray(hatched)), m
        assert np.array_equal(_crop(last, box, t), np.asarray(draw.upscale(images[m], t.grid, box.px))), m


def test_a_lane_shows_exactly_the_cells_committed_by_each_forward(run):
    traces, _ = run
    t = traces["sjd"]
    for k in (1, 2, len(t.steps) // 2, len(t.steps)):
        want = {ev.pos for st in t.steps[:k] for ev in st.events if ev.decision in
                ("exact", "relaxed", "resampled", "bonus", "ar")}
        assert set(np.flatnonzero(video.committed_after(t, k))) == want


@pytest.mark.parametrize("grid", [(16, 16), (24, 24), (32, 32), (4, 6), (6, 4)])
def test_lanes_are_a_regular_grid_inside_the_frame(grid):
    for n in range(1, 11):
        boxes = video.lane_boxes(n, grid)
        assert len({b.px for b in boxes}) == 1                     # no method emphasised by size
        c = draw.cell_px(grid, boxes[0].px)
        w, h = c * grid[1], c * grid[0]
        assert w == boxes[0].px and c >= 2
        for b in boxes:
            assert b.x >= 0 and b.y - video.LABEL >= video.HEADER and b.x + w <= video.SIZE[0]
            assert b.y + h <= video.SIZE[1]
        for a, b in itertools.combinations(boxes, 2):              # no two lanes overlap
            assert a.x + w <= b.x or b.x + w <= a.x or a.y + h <= b.y or b.y + h <= a.y


@pytest.mark.slow
def test_export_writes_a_zip_named_videos_and_a_16_9_figure(run, tmp_path):
    traces, images = run
    paths = exports.export_run(traces, images, "Red house, at dusk!", tmp_path)
    bundle, files = paths[0], paths[1:]
    assert bundle.suffix == ".zip"
    with zipfile.ZipFile(bundle) as z:
        assert sorted(z.namelist()) == sorted(p.name for p in files)
    names = [p.name for p in files]
    assert "red-house-at-dusk_seed3_csd_lam0.5_delta0.5.png" in names
    assert "red-house-at-dusk_seed3_ar.png" in names
    gif = next(p for p in files if p.suffix == ".gif")
    mp4 = next(p for p in files if p.suffix == ".mp4")
    assert gif.name == "red-house-at-dusk_seed3_lam0.5_delta0.5_taupos0.8_tauseq0.8_race.gif"
    g, v = iio.imread(gif, index=None), iio.imread(mp4, plugin="pyav")
    assert len(g) == video.frame_count(traces, "gif") and len(v) == video.frame_count(traces, "mp4")
    assert g.shape[1:3] == v.shape[1:3] == (video.SIZE[1], video.SIZE[0])
    # the exported PNGs and the film's last frame show the same cells (compare cell centres: both are upscaled)
    want_last = video.draw_frame(traces, images, video.clock(traces)[-1])
    assert np.abs(g[-1][..., :3].astype(int) - want_last).mean() < 2              # GIF: a per-frame palette
    assert np.abs(v[-1].astype(int) - want_last).mean() < 6                        # MP4: lossy
    for box, (m, t) in zip(video.lane_boxes(len(traces), t_grid := t_of(traces).grid), traces.items()):
        png = np.asarray(Image.open(next(p for p in files if p.name.startswith(f"red-house-at-dusk_seed3_{m}")
                                         and p.suffix == ".png")).convert("RGB"))
        assert np.array_equal(_centres(png, t_grid), _centres(_crop(want_last, box, t), t_grid)), m
    fig = Image.open(next(p for p in files if p.name.endswith("_figure.png")))
    assert fig.size == (1920, 1080)


def test_an_opened_trace_gives_the_same_film(run, tmp_path):
    traces, images = run
    opened = {}
    for m, t in traces.items():
        t.save(tmp_path / f"{m}.json")
        opened[m] = Trace.load(tmp_path / f"{m}.json")
    for k in (0, 3, video.clock(traces)[-1]):
        assert np.array_equal(video.draw_frame(opened, images, k), video.draw_frame(traces, images, k))


def t_of(traces):
    return next(iter(traces.values()))


def _centres(img: np.ndarray, grid) -> np.ndarray:
    c = img.shape[0] // grid[0]
    return img[c // 2::c, c // 2::c][: grid[0], : grid[1]]
