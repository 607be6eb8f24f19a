"""The sweep's trade-off plot (specviz/render/pareto.py): the front is exactly the undominated swept points, references
stay off it, every label box is clear of every other label and marker, a flat measure is stated, not drawn."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from matplotlib.lines import Line2D
from matplotlib.text import Annotation

from specviz.analysis import front
from specviz.render import pareto


def rows(points, measure="implausible", flat_nll=True):
    out = [{"method": "ar", "point": {}, "result": {"step_compression": 1.0, measure: 3.9, "nll": 2.5,
                                                    "tv_cost": 0.0}},
           {"method": "sjd", "point": {}, "result": {"step_compression": 1.8, measure: 4.1, "nll": 2.5,
                                                     "tv_cost": 0.0}}]
    for lam, (x, y) in points.items():
        out.append({"method": "csd", "point": {"lam": lam}, "result": {"step_compression": x, measure: y,
                                                                       "nll": 2.5 if flat_nll else 2.5 + y,
                                                                       "tv_cost": y / 10}})
    return out


GRID = {0.25: (1.90, 4.2), 0.5: (2.05, 4.9), 1.0: (2.10, 8.9), 2.0: (2.08, 12.0), 4.0: (2.30, 20.1),
        8.0: (2.31, 41.8), 0.1: (1.95, 4.2)}


def brute_front(pts):
    sw = [p for p in pts if not p.reference]
    return {p.label for p in sw if all(not (q.x >= p.x and q.y <= p.y and (q.x, q.y) != (p.x, p.y)) for q in sw)}


def test_front_is_exactly_the_undominated_swept_points():
    pts = front.points(rows(GRID), "implausible", frozenset({"sjd"}))
    got = front.front(pts)
    assert {p.label for p in got} == brute_front(pts) == {"λ=0.1", "λ=0.5", "λ=1", "λ=4", "λ=8"}
    assert [p.x for p in got] == sorted((p.x for p in got), reverse=True)
    assert not any(p.reference for p in got)


def test_labels_never_overlap_each_other_or_a_marker():
    crowded = {round(0.1 * i, 2): (2.0 + 0.004 * i, 5 + 0.05 * i) for i in range(1, 7)}
    for grid in (GRID, crowded):
        fig = pareto.figure(front.plot(rows(grid), "implausible", frozenset({"sjd"})))
        r = fig.canvas.get_renderer()
        ax = fig.axes[0]
        labels = [t for t in ax.texts if isinstance(t, Annotation)]
        assert len(labels) == len(grid) + 2
        boxes = [t.get_window_extent(r) for t in labels]
        for a, b in itertools.combinations(boxes, 2):
            assert not a.overlaps(b), (a, b)
        marks = [ax.transData.transform(t.xy) for t in labels]
        for box in boxes:
            assert not any(box.x0 <= mx <= box.x1 and box.y0 <= my <= box.y1 for mx, my in marks)
            assert fig.bbox.contains(box.x0, box.y0) and fig.bbox.contains(box.x1, box.y1)   # inside the figure


def test_front_line_and_reference_markers_are_drawn():
    fig = pareto.figure(front.plot(rows(GRID), "implausible", frozenset({"sjd"})))
    ax = fig.axes[0]
    line = next(ln for ln in ax.get_lines() if ln.get_label() == "Pareto front")
    assert list(line.get_xdata()) == [p.x for p in front.front(front.points(rows(GRID), "implausible",
                                                                             frozenset({"sjd"})))]
    labels = {t.get_text() for t in ax.get_legend().get_texts()}
    assert {"AR", "sjd (lossless)", "Pareto front", "swept points"} <= labels
    title = ax.get_title(loc="left")
    assert "NLL" in title and "2.5 at every point" in title                      # the flat NLL: stated
    assert "implausible" in ax.get_ylabel()


def test_a_flat_measure_is_stated_not_drawn():
    flat = {lam: (x, 7.0) for lam, (x, _) in GRID.items()}
    data = rows(flat)
    for r in data:
        r["result"]["implausible"] = 7.0
    fig = pareto.figure(front.plot(data, "implausible"))
    ax = fig.axes[0]
    assert not [ln for ln in ax.get_lines() if isinstance(ln, Line2D) and ln.get_label() == "Pareto front"]
    assert "implausible codes per image = 7 at every point" in ax.get_title(loc="left") and ax.get_ylabel() == "(flat)"


def test_unknown_measure_is_a_clear_error():
    with pytest.raises(ValueError, match="measure must be one of"):
        pareto.figure(front.plot(rows(GRID), "fid"))


def test_nll_measure_moves_when_it_moves():
    fig = pareto.figure(front.plot(rows(GRID, flat_nll=False), "nll"))
    ys = [t.xy[1] for t in fig.axes[0].texts if isinstance(t, Annotation)]
    assert np.ptp(ys) > 0 and "NLL" in fig.axes[0].get_ylabel()


def test_bars_are_the_standard_errors_of_the_per_image_values():
    """The bench's implausible_se is stdev/√n of the per-image counts, and the plot draws ±1 of it at each point."""
    import statistics

    from specviz.analysis import bench  # the aggregate that fills the rows: only this test needs it
    per_image = {0.5: [3, 5, 4, 8], 1.0: [9, 12, 7, 15]}
    rows_ = []
    for lam, counts in per_image.items():
        r = [{"target_forwards": 10, "step_compression": 2.0 + lam, "seconds": 1.0, "mean_accepted": 1.0,
              "nll": 2.0, "tv_cost": 0.1, "implausible": c, "relaxed": 0, "accepted_drafts": 1, "accepted_hist": [1]}
             for c in counts]
        agg = bench.aggregate(r, None)
        assert agg["implausible_se"] == pytest.approx(statistics.stdev(counts) / 2, abs=1e-4)
        rows_.append({"method": "csd", "point": {"lam": lam}, "result": agg})
    ax = pareto.figure(front.plot(rows_, "implausible", frozenset())).axes[0]
    spans = sorted(float(np.ptp(seg[:, 1])) for c in ax.collections if c.__class__.__name__ == "LineCollection"
                   for seg in c.get_segments())
    assert spans == pytest.approx(sorted(2 * r["result"]["implausible_se"] for r in rows_), abs=1e-6)
    assert "standard error" in ax.get_ylabel()


def with_se(points: dict, se: float) -> list[dict]:
    out = rows(points)
    for r in out:
        r["result"]["implausible_se"] = se
    return out


def test_the_front_is_cut_where_points_lie_within_their_errors_and_a_note_says_so():
    pts = {0.5: (2.0, 4.0), 1.0: (2.2, 4.6), 2.0: (2.4, 9.0)}       # 4.0 vs 4.6: apart only if se < 0.6/√2
    sharp = pareto.figure(front.plot(with_se(pts, 0.1), "implausible", frozenset({"sjd"}))).axes[0]
    fronts = [ln for ln in sharp.get_lines() if ln.get_color() == "tab:red"]
    assert [list(ln.get_xdata()) for ln in fronts] == [[2.4, 2.2, 2.0]]
    assert "cannot be ranked" not in sharp.get_title(loc="left")
    blurred = pareto.figure(front.plot(with_se(pts, 0.5), "implausible", frozenset({"sjd"}))).axes[0]
    fronts = [ln for ln in blurred.get_lines() if ln.get_color() == "tab:red"]
    assert [list(ln.get_xdata()) for ln in fronts] == [[2.4, 2.2]]          # 2.2 -> 2.0 is not drawn
    assert "1 of 2 neighbouring pairs of points lie within their standard errors and cannot be ranked" in \
        blurred.get_title(loc="left").replace("\n", " ")                 # wrapped to the figure's width


def test_the_axis_words_and_the_notes_lie_inside_the_figure():
    """The long measure label and a long title of notes are wrapped, never cut by the figure's edge."""
    pts = {0.5: (2.0, 4.0), 1.0: (2.2, 4.6), 2.0: (2.4, 9.0)}
    fig = pareto.figure(front.plot(with_se(pts, 0.5), "implausible", frozenset({"sjd"})))
    ax, r = fig.axes[0], fig.canvas.get_renderer()
    assert "\n" in ax.get_title(loc="left") and "\n" in ax.yaxis.label.get_text()
    for text in (ax._left_title, ax.yaxis.label, ax.xaxis.label):      # the notes are the left-hand title
        box = text.get_window_extent(r)
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= fig.bbox.x1 + 0.5 and box.y1 <= fig.bbox.y1 + 0.5, text
