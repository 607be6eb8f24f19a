"""The race video's frame uses its area: for 1..10 lanes, plain and keyed captions, the lanes'
pictures are as large as any regular grid of the 16:9 frame allows with every caption whole, the frame is as full as
any such grid of those pictures makes it, and the written films' last frame shows every lane's name and step
compression whole.

The bound is a brute force written from the frame's geometry alone (not frame_layout's search): every column count,
the caption above the picture (as wide as the picture) or beside it (as wide as what the row leaves), every caption
type of STYLES and every cell size; a grid fits when the lanes, their gaps and the captions' wrapped lines (measured
with the font they are drawn in) lie inside the frame below the header. No arrangement of that kind gives larger
pictures than the best it finds, so the layout's are at least as large; at that picture size and caption type the
layout covers at least as much of the frame as the brute force's best."""
import dataclasses
import functools
import math

import imageio.v3 as iio
import numpy as np
import pytest
from PIL import Image

from specviz.analysis.cards import cards
from specviz.render import draw, video
from specviz.render import frame_layout as fl
from tests.render.test_keyed_exports import traces as keyed_traces
from tests.render.test_video import drawn_texts

METHODS = ("ar", "sjd", "csd", "gsd", "sd", "cascade", "lantern", "lanternpp", "mcsjd", "sjdpac")
PLAIN = "done at forward 144 · 2.25× step compression"
KEYED = PLAIN + " · 12 tokens changed vs AR"


def names(n: int) -> tuple:
    return tuple(cards().of(m).label for m in METHODS[:n])


def brute_force(n: int, grid, caps: tuple, heads: tuple, size=fl.SIZE) -> tuple:
    """(cell, caption type's rank, used share of the frame) of the best regular grid: largest cell, then the larger
    type, then the most of the frame covered."""
    (w, h), (gh, gw), best = size, grid, (0, 0, 0.0)
    for cols in range(1, n + 1):
        rows = math.ceil(n / cols)
        for rank, (name_px, sub_px) in enumerate(fl.STYLES):
            for cell in range(1, min((w - 2 * fl.GAP) // gw, (h - fl.HEADER - 2 * fl.GAP) // gh) + 1):
                px, ph = cell * gw, cell * gh
                for side in (False, True):
                    tw = (w - (cols + 1) * fl.GAP) // cols - px - fl.GAP if side else px
                    if tw < 1:
                        continue
                    widest, th = measured(heads, caps, tw, name_px, sub_px)
                    lane_w, lane_h = (px + fl.GAP + math.ceil(widest), max(ph, th)) if side else (px, ph + th)
                    fits = widest <= tw and cols * lane_w + (cols + 1) * fl.GAP <= w and \
                        fl.HEADER + rows * lane_h + (rows + 1) * fl.GAP <= h
                    if fits:
                        best = max(best, (cell, -rank, n * lane_w * lane_h / (w * h)))
    return best


@functools.lru_cache(maxsize=None)
def measured(heads: tuple, caps: tuple, tw: int, name_px: int, sub_px: int) -> tuple[float, int]:
    """(widest line px, tallest caption px) of the lanes' names and captions wrapped at tw, as draw_frame draws them:
    the name's lines in bold (name_px + 6 px each), the caption's (sub_px + 4 px each), 4 px under them."""
    text = [(fl.wrap(a, tw, name_px, True), fl.wrap(c, tw, sub_px)) for a, c in zip(heads, caps)]
    widest = max(max(draw.font(name_px, True).getlength(s) for s in a) for a, _ in text)
    widest = max(widest, max(max(draw.font(sub_px).getlength(s) for s in c) for _, c in text))
    return widest, max(len(a) * (name_px + 6) + len(c) * (sub_px + 4) + 4 for a, c in text)


def layout(n: int, grid, cap: str) -> list:
    return fl.lane_boxes(n, grid, captions=(cap,) * n, names=names(n))


@pytest.mark.parametrize("cap", [PLAIN, KEYED], ids=["plain", "keyed"])
@pytest.mark.parametrize("n", range(1, 11))
def test_lanes_are_as_large_and_the_frame_as_full_as_any_grid_allows(n, cap):
    grid = (16, 16)
    boxes = layout(n, grid, cap)
    cell, rank, share = brute_force(n, grid, (cap,) * n, names(n))
    got = (draw.cell_px(grid, boxes[0].px), -fl.STYLES.index((boxes[0].name_font, boxes[0].font)))
    assert got >= (cell, rank), (n, got, cell, rank)                        # (a) pictures as large as any grid's
    if got == (cell, rank):
        assert fl.used(boxes) >= share - 1e-9, (n, fl.used(boxes), share)   # (b) the frame as full
    assert boxes[0].px >= {1: 608, 4: 288, 10: 208 if cap == KEYED else 224}.get(n, 0)   # as docs/app.md states


def test_keyed_captions_keep_ten_lanes_pictures():
    """The keyed word on AR costs ten lanes at most one cell of picture (it cost four of sixteen before)."""
    grid = (16, 16)
    assert layout(10, grid, KEYED)[0].px >= layout(10, grid, PLAIN)[0].px - grid[1]


def ten_lanes(noise: str) -> dict:
    """A ten-lane race from the tiny model's three traces: AR, SJD, then CSD under the other methods' names (every
    non-AR lane but SJD with a changed-token count in keyed noise: the longest captions)."""
    ts = keyed_traces(noise)
    return {m: dataclasses.replace(ts[m if m in ts else "csd"], method=m) for m in METHODS}


def images_of(ts: dict) -> dict:
    return {m: np.asarray(Image.new("RGB", (4, 4), (40 + 20 * i, 90, 160))) for i, m in enumerate(ts)}


def ten_lanes_captions_whole(noise: str = "keyed") -> None:
    """(c) The last frame of ten lanes: each lane's name whole (its wrapped lines joined give its label) and its
    caption whole — "done at forward F", "X.XX× step compression" and in keyed noise the word on AR — inside its
    caption box, every line no wider than the box (measured with the font it is drawn in), no ellipsis."""
    ts = ten_lanes(noise)
    labels, last = video.lane_labels(ts, cards()), video.slowest(ts)
    boxes = video.frame_boxes(ts, labels=labels)
    texts = drawn_texts_labelled(ts, images_of(ts), last, labels)
    for box, (m, t) in zip(boxes, ts.items()):
        mine = [x for x in texts if box.tx <= x[0] < box.tx + box.tw and box.ty <= x[1] < box.ty + box.th]
        heads = fl.wrap(labels[m], box.tw, box.name_font, True)
        assert tuple(x[2] for x in mine[:len(heads)]) == heads and " ".join(heads) == labels[m], (m, mine)
        caption = " · ".join(x[2] for x in mine[len(heads):])
        assert f"done at forward {len(t.steps)}" in caption, (m, caption)
        assert f"{t.summary['step_compression']:.2f}× step compression" in caption, (m, caption)
        if noise == "keyed" and m not in ("ar", "sjd"):
            assert "tokens changed vs AR" in caption or "token changed vs AR" in caption, (m, caption)
        for x, y, s, px, width in mine:
            assert "…" not in s and x + width <= box.tx + box.tw and y + px <= box.ty + box.th, (m, s)
    assert len(texts) == 2 + sum(len(fl.wrap(labels[m], b.tw, b.name_font, True)) +
                                 len(fl.wrap(video.lane_line(t, last, c), b.tw, b.font))
                                 for b, (m, t), c in zip(boxes, ts.items(), caption_counts(ts)))  # none elsewhere


def caption_counts(ts: dict) -> list:
    vs = video.paired.against_ar(ts)
    return [vs.get(m) for m in ts]


@pytest.mark.parametrize("noise", ["keyed", "papers"])
def test_the_last_frame_of_ten_lanes_shows_every_caption_whole(noise):
    ten_lanes_captions_whole(noise)


@pytest.mark.slow
@pytest.mark.parametrize("noise", ["keyed", "papers"])
def test_the_written_films_last_frame_is_that_frame(noise, tmp_path):
    """The written GIF's and MP4's last frames, decoded: the frame's size, and the frame checked above."""
    ts = ten_lanes(noise)
    images, labels = images_of(ts), video.lane_labels(ts, cards())
    gif, mp4 = video.write_videos(ts, images, tmp_path / f"race_{noise}", labels)
    want = video.draw_frame(ts, images, video.slowest(ts), labels)
    g, v = iio.imread(gif, index=None)[-1], iio.imread(mp4, plugin="pyav")[-1]
    assert g.shape[:2] == v.shape[:2] == (video.SIZE[1], video.SIZE[0])
    assert np.abs(g[..., :3].astype(int) - want).mean() < 2 and np.abs(v.astype(int) - want).mean() < 6


def drawn_texts_labelled(ts, images, k, labels) -> list:
    """drawn_texts with the lanes' labels (the film's names)."""
    with pytest.MonkeyPatch.context() as mp:
        draw_frame = video.draw_frame
        mp.setattr(video, "draw_frame", lambda t, i, kk, lab=None, **kw: draw_frame(t, i, kk, labels, **kw))
        return drawn_texts(ts, images, k)
