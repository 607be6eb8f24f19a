"""The race as a video and the slide-ready export: frames drawn from the traces (clock, hatching, last frame = the
final images), the GIF and MP4 files (frame counts as designed), the same film from opened trace files, the zip and
the file names, the 16:9 slide figure."""
import functools
import itertools
import zipfile

import imageio.v3 as iio
import numpy as np
import pytest
from PIL import Image

from specviz.analysis.cards import cards
from specviz.app import race as race_mod
from specviz.app.configs import make_configs
from specviz.core.trace import Trace
from specviz.render import draw, exports, frame_layout, video
from tests.support.toy import toy

METHODS = ["ar", "sjd", "csd", "sd"]


@functools.lru_cache(maxsize=1)
def toy_race():
    model, factory = toy(codes=12, grid=6, seed=5)
    cfgs = make_configs(METHODS, prompt="red house", seed=3, lam=0.5, delta=0.5, tree_depth=3, tree_topk=2,
                                tree_nodes=6)
    *_, last = race_mod.race(model, factory, cfgs, fps=1000)
    return last.traces, last.images


@pytest.fixture(scope="module")
def run():
    return toy_race()


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
    boxes = video.frame_boxes(traces)
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


CAPTIONS = ("", "done at forward 144 · 2.25× step compression",
            "done at forward 144 · 2.25× step compression · 12 tokens changed vs AR")


NAMES = ("AR", "SJD", "CSD (content-aware)", "GSD", "SD", "CASCADE", "LANTERN", "LANTERN++", "MC-SJD", "SJD-PAC")


SLOW = pytest.mark.slow                                   # 4 to 24 s each here: the full lane


@pytest.mark.parametrize("grid", [(16, 16), (24, 24), pytest.param((32, 32), marks=SLOW),
                                  pytest.param((4, 6), marks=SLOW), pytest.param((6, 4), marks=SLOW)])
def test_lanes_are_a_regular_grid_inside_the_frame(grid):
    """Lanes and their captions (above or beside) inside the frame, below the header, none overlapping, each
    lane's name and caption lines (at the box's fonts) inside its caption box."""
    for n, cap, named in itertools.product(range(1, 11), CAPTIONS, (False, True)):
        names = NAMES[:n] if named else None
        boxes = frame_layout.lane_boxes(n, grid, captions=(cap,) * n, names=names)
        assert len({(b.px, b.tw, b.font, b.name_font) for b in boxes}) == 1   # no method emphasised by size
        c = draw.cell_px(grid, boxes[0].px)
        w, h = c * grid[1], c * grid[0]
        assert w == boxes[0].px and h == boxes[0].ph and c >= 2
        rects = []
        for b, name in zip(boxes, names or ("",) * n):
            heads = frame_layout.wrap(name, b.tw, b.name_font, True)
            lines = frame_layout.wrap(cap, b.tw, b.font)
            th = len(heads) * b.name_h + len(lines) * b.line_h
            assert th <= b.th, (n, cap, name)
            rects += [(b.x, b.y, b.x + w, b.y + h), (b.tx, b.ty, b.tx + b.tw, b.ty + th)]
            assert all(draw.font(b.name_font, True).getlength(s) <= b.tw for s in heads), (n, name, heads)
            assert all(draw.font(b.font).getlength(s) <= b.tw for s in lines), (n, cap, lines)
        for x0, y0, x1, y1 in rects:
            assert x0 >= 0 and y0 >= frame_layout.HEADER and x1 <= video.SIZE[0] and y1 <= video.SIZE[1], (n, cap)
        for a, b in itertools.combinations(rects, 2):                        # nothing overlaps
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (n, cap, a, b)


def drawn_texts(traces, images, k) -> list:
    """(x, y, text, font px, width px) of every text draw_frame draws at clock k (ImageDraw.text spied on)."""
    from PIL import ImageDraw  # only this spy needs the drawing class

    seen, text = [], ImageDraw.ImageDraw.text

    def spy(self, xy, s, *a, font=None, **kw):
        seen.append((xy[0], xy[1], s, font.size, font.getlength(s)))
        return text(self, xy, s, *a, font=font, **kw)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ImageDraw.ImageDraw, "text", spy)
        video.draw_frame(traces, images, k, sliders=cards().sliders)
    return seen


def test_the_last_frame_shows_every_lanes_step_compression_whole():
    """The last frame's drawn captions: each lane "done at forward F" and "X.XX× step compression" with X.XX its
    trace's, whole (wrapped, no ellipsis), every line inside its lane's caption box and clear of every lane's
    image; and the lanes fill the frame: as large as any arrangement allows (here four in a row, width-bound), the
    lane block centred below the header."""
    traces, images = toy_race()
    last = video.slowest(traces)
    boxes = video.frame_boxes(traces)
    texts = drawn_texts(traces, images, last)
    grid = next(iter(traces.values())).grid
    images_at = [(b.x, b.y, b.x + b.px, b.y + b.px // grid[1] * grid[0]) for b in boxes]
    for box, (m, t) in zip(boxes, traces.items()):
        mine = [x for x in texts if box.tx <= x[0] < box.tx + box.tw and box.ty <= x[1] < box.ty + 400]
        caption = " · ".join(x[2] for x in mine[1:])
        assert f"done at forward {len(t.steps)}" in caption, (m, caption)
        assert f"{t.summary['step_compression']:.2f}× step compression" in caption, (m, caption)
        for x, y, s, size, width in mine:
            assert "…" not in s and x + width <= box.tx + box.tw, (m, s)
            assert all(y + size <= iy0 or y >= iy1 or x + width <= ix0 or x >= ix1
                       for ix0, iy0, ix1, iy1 in images_at), (m, s)         # clear of every image
            assert y + size + 4 <= video.SIZE[1]
    assert len({t.summary["step_compression"] for t in traces.values()}) > 1    # the lanes' numbers differ
    cell = draw.cell_px(grid, boxes[0].px)
    assert cell == (video.SIZE[0] - (len(traces) + 1) * frame_layout.GAP) // len(traces) // grid[1]   # width-bound
    frame = np.asarray(video.draw_frame(traces, images, last))
    ink = np.flatnonzero((frame[frame_layout.HEADER:] != 255).any(-1).any(-1)) + frame_layout.HEADER
    top, bottom = ink.min() - frame_layout.HEADER, video.SIZE[1] - 1 - ink.max()
    assert abs(top - bottom) <= 2 * frame_layout.GAP, (top, bottom)        # centred below the header


@pytest.mark.slow
def test_export_writes_a_zip_named_videos_and_a_16_9_figure(run, tmp_path):
    traces, images = run
    paths = exports.export_run(traces, images, "Red house, at dusk!", tmp_path, cards=cards())
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
    want_last = video.draw_frame(traces, images, video.clock(traces)[-1], video.lane_labels(traces, cards()))
    assert np.abs(g[-1][..., :3].astype(int) - want_last).mean() < 2              # GIF: a per-frame palette
    assert np.abs(v[-1].astype(int) - want_last).mean() < 6                        # MP4: lossy
    for box, (m, t) in zip(video.frame_boxes(traces), traces.items()):
        png = np.asarray(Image.open(next(p for p in files if p.name.startswith(f"red-house-at-dusk_seed3_{m}")
                                         and p.suffix == ".png")).convert("RGB"))
        assert np.array_equal(_centres(png, t.grid), _centres(_crop(want_last, box, t), t.grid)), m
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
