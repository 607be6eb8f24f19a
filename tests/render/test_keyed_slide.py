"""The slide, the video and the export names say the noise, and the slide's row labels — with the keyed word on AR
("identical to AR ✓" / "N tokens changed vs AR") their third line — fit 1 to 10 rows: every text box matplotlib's
renderer draws (titles, row labels, colourbar labels and tick labels, the legend, the caption) lies inside the
figure and overlaps no other (the third line overprinted the next row at 5 methods and piled up at 10)."""
from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from specviz.analysis.cards import cards
from specviz.render import exports, figures, video
from tests.render.test_keyed_exports import traces as three
from tests.render.test_video import drawn_texts
from tests.render.test_video_layout import images_of, ten_lanes

PROMPT = "a red house on the left, a sunset sky over snow"


def drawn_text_boxes(fig) -> list:
    """(text, window extent) of every text the figure draws: tick labels inside their axis's view, axis labels and
    titles, legend entries, figure texts and the caption; measured after a draw with the figure's renderer."""
    r = fig.canvas.get_renderer()
    fig.draw(r)
    texts = []
    for ax in [a for top in fig.axes for a in (top, *top.child_axes)]:
        for axis, lim in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            lo, hi = min(lim), max(lim)
            texts += [t for loc, t in zip(axis.get_majorticklocs(), axis.get_majorticklabels())
                      if lo - 1e-9 <= loc <= hi + 1e-9 and t.get_visible() and t.get_text()]
        texts += [t for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts)
                  if t.get_visible() and t.get_text()]
    for legend in fig.legends:
        texts += legend.get_texts()
    texts += [t for t in fig.texts if t.get_text()]
    if fig._suptitle is not None and fig._suptitle.get_text() and fig._suptitle not in texts:
        texts.append(fig._suptitle)
    return [(t.get_text(), t.get_window_extent(r)) for t in texts]


def lanes(n: int) -> dict:
    """n keyed lanes: AR, SJD (identical), then CSD's trace under other names (a changed count each); one lane: CSD."""
    ts = ten_lanes("keyed")
    return {"csd": ts["csd"]} if n == 1 else dict(itertools.islice(ts.items(), n))


def slide_is_clear(n: int) -> None:
    ts = lanes(n)
    fig = figures.slide_figure(ts, images_of(ts), PROMPT, video.settings_line(ts, cards().sliders))
    boxes = drawn_text_boxes(fig)
    labels = figures.row_labels(ts)
    assert [t for t, _ in boxes if t in labels.values()] == list(labels.values())    # every row's label is drawn
    if n >= 3:
        assert "identical to AR ✓" in labels["sjd"] and "tokens changed vs AR" in labels["csd"]
    w, h = fig.bbox.width, fig.bbox.height
    for text, b in boxes:
        assert b.x0 >= 0 and b.y0 >= 0 and b.x1 <= w and b.y1 <= h, (n, text, b)
    for (ta, a), (tb, b) in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), (n, ta, tb)
    assert fig._suptitle.get_text().endswith("· keyed noise")


@pytest.mark.parametrize("n", [1, 4, 5, 10])
def test_no_two_text_boxes_of_the_keyed_slide_overlap(n):
    slide_is_clear(n)


def ten_rows_clear() -> None:
    slide_is_clear(10)


def test_the_video_and_the_slide_say_the_noise():
    for noise, word in (("keyed", "keyed noise"), ("papers", "papers' noise")):
        ts = three(noise)
        assert video.settings_line(ts, cards().sliders).endswith(f"τ_seq {ts['ar'].config.get('tau_seq')} · {word}")
        header = drawn_texts(ts, {m: np.zeros((4, 4, 3), np.uint8) for m in ts}, 0)[1]
        assert header[2].startswith(video.settings_line(ts, cards().sliders))


def header_fits() -> None:
    """A long seed with the noise still fits the frame's header line whole (it ran off at 24 px)."""
    ts = {m: dataclasses.replace(t, config={**t.config, "seed": 2 ** 63 - 1, "lam": 0.123456789})
          for m, t in three("keyed").items()}
    x, _, text, px, width = drawn_texts(ts, {m: np.zeros((4, 4, 3), np.uint8) for m in ts}, 0)[1]
    assert text.startswith(video.settings_line(ts, cards().sliders)) and "keyed noise" in text
    assert x + width <= video.SIZE[0] - video.GAP and px >= 12


def test_the_header_line_fits_the_frame():
    header_fits()


def export_names_carry_the_noise(tmp_path) -> None:
    for noise in ("keyed", "papers"):
        ts = three(noise)
        images = {m: np.zeros((4, 4, 3), np.uint8) for m in ts}
        paths = exports.export_run(ts, images, PROMPT, tmp_path / noise, videos=False, cards=cards())
        names = [p.name for p in paths]
        assert len(names) > 6
        assert all(("_keyed" in n) == (noise == "keyed") for n in names), names


def test_export_names_carry_the_noise(tmp_path):
    export_names_carry_the_noise(tmp_path)
