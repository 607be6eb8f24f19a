"""The "Acceptance b" map against the trace: each cell's value is the acceptance probability b (accept_prob) of the
event that committed it when that event is a judged draft (accepted exactly or by relaxation), NaN (grey) where the
committed token was sampled instead (AR steps, resampled and bonus tokens); the drawn composite colours each cell
from exactly that value on the fixed 0..1 viridis scale, and the map is one of the app's / export's map kinds.
Plain functions on a cached toy race (ar, sjd, csd, sd), so tests/mutation/mutants_accept_map.py can call them."""
from __future__ import annotations

import numpy as np

from specviz.analysis import views
from specviz.analysis.cards import cards
from specviz.render import draw, panels
from tests.render.test_replay import race


def expected(trace) -> np.ndarray:
    """From the raw step records: the committing event's accept_prob where it is a judged draft, else NaN."""
    h, w = trace.grid
    out = np.full(h * w, np.nan)
    for st in trace.steps:
        for ev in st.events:
            if ev.decision in ("exact", "relaxed"):
                out[ev.pos] = ev.accept_prob
            elif ev.decision in ("resampled", "bonus", "ar"):
                out[ev.pos] = np.nan
    return out.reshape(h, w)


def test_the_acceptance_map_is_each_committed_drafts_b():
    traces, _, _ = race()
    differs = resampled = 0
    for m, t in traces.items():
        got, want = views.numeric_map(t, "accept"), expected(t)
        assert np.array_equal(got, want, equal_nan=True), m
        committed = {ev.pos: ev for st in t.steps for ev in st.events if ev.commits}
        differs += sum(ev.decision == "relaxed" and ev.accept_prob != ev.exact_prob for ev in committed.values())
        resampled += sum(ev.decision == "resampled" and any(e.pos == ev.pos and e.decision == "rejected"
                                                           for st in t.steps for e in st.events)
                         for ev in committed.values())
        if m == "ar":
            assert np.isnan(got).all()                                   # AR judges no drafts
        else:
            assert np.isfinite(got).any() and np.isnan(got).any(), m     # the first token, at least, is sampled
    assert differs and resampled            # the race has cells where b != min(1, q/p) and rejected-then-resampled


def test_the_drawn_acceptance_map_colours_each_cell_from_b():
    traces, images, _ = race()
    im = np.asarray(panels.heatmap("accept", traces, images, cards=cards()))
    spec = views.MAPS["accept"]
    assert (spec.vmax, spec.scale, spec.cmap) == (1.0, "fixed", "viridis") and spec.title == "Acceptance b"
    grid = next(iter(traces.values())).grid
    c = draw.cell_px(grid)
    for (x0, y0), (m, t) in zip(draw.layout(len(traces)), traces.items()):
        want = draw.colorize(expected(t), "viridis", 0.0, 1.0)
        centres = im[y0 + c // 2:y0 + c * grid[0]:c, x0 + c // 2:x0 + c * grid[1]:c]
        assert np.array_equal(centres, want), m
    assert "accept" in views.MAPS and "accept" in panels.exported_kinds(traces, cards())
