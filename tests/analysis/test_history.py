"""The tuning history: each row equals the trace it describes (checked against the raw events, not the summary
code), the window is bounded, pinning and clearing behave, CSV round-trips, and the decision difference map marks
exactly the cells decided differently."""
from __future__ import annotations

import copy
import csv
import gc
import io
import math
import weakref

import numpy as np
import pytest
import torch

from specviz.analysis import history as hist
from specviz.analysis import views
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from tests.support.toy import toy


@pytest.fixture(scope="module")
def runs():
    torch.set_num_threads(1)
    model, factory = toy(codes=12, grid=4, seed=5)

    def go(lam):
        return {m: drain(decode(model, RunConfig(method=m, prompt="red house", seed=1, lam=lam, delta=0.9,
                                                 window=4), factory)).trace for m in ("ar", "csd")}
    return go(0.0), go(3.0)


def raw_row(trace) -> dict:
    """What a row must say, straight from the step events."""
    final = {}
    for st in trace.steps:
        for ev in st.events:
            if ev.decision in ("exact", "relaxed", "resampled", "bonus", "ar"):
                final[ev.pos] = ev
    accepted = [ev for st in trace.steps for ev in st.events if ev.decision in ("exact", "relaxed")]
    relaxed = sum(ev.decision == "relaxed" for ev in accepted)
    q = np.array([ev.p_target for ev in final.values()])
    return {"forwards": len(trace.steps), "compression": len(final) / len(trace.steps),
            "relaxed_share": relaxed / max(1, len(accepted)), "implausible": int((q < 1e-3).sum()),
            "nll": float(np.mean(-np.log(np.maximum(q, 1e-12)))),
            "tv_cost": sum(ev.tv_cost for ev in final.values() if ev.decision != "ar"),
            "lam": trace.config["lam"], "seed": trace.config["seed"]}


def test_rows_equal_the_traces_they_describe(runs):
    h = hist.History()
    for i, traces in enumerate(runs):
        h.add(traces, {}, "generate" if i == 0 else "rerun")
    rows = h.rows()
    assert [(r.run, r.method, r.source) for r in rows] == [(1, "ar", "generate"), (1, "csd", "generate"),
                                                           (2, "ar", "rerun"), (2, "csd", "rerun")]
    for row, trace in zip(rows, [t for traces in runs for t in traces.values()]):
        want = raw_row(trace)
        for k, v in want.items():
            assert getattr(row, k) == pytest.approx(v, rel=1e-9, abs=1e-9), (row.method, k)
    assert rows[1].lam == 0.0 and rows[3].lam == 3.0 and rows[3].relaxed_share > 0       # the knob moved it


def test_window_pin_clear_and_csv(runs, monkeypatch):
    monkeypatch.setattr(hist, "MAX_RUNS", 3)
    h = hist.History()
    h.add(runs[0], {}, "generate")
    h.pinned = 1
    assert h.table()[-1][0] == "1 📌"
    for _ in range(3):
        h.add(runs[1], {}, "rerun")
    assert [r.number for r in h.runs] == [2, 3, 4] and h.pinned is None and h.get(1) is None
    table = list(csv.reader(io.StringIO(h.csv())))
    assert table[0][:3] == ["run", "source", "method"] and len(table) == 1 + 6
    assert float(table[1][table[0].index("nll")]) == pytest.approx(h.rows()[0].nll)
    h.clear()
    assert not h.rows() and h.table() == []


def test_decision_difference_marks_exactly_the_cells_decided_differently(runs):
    a, b = runs[0]["csd"], runs[1]["csd"]
    diff = hist.decision_difference(hist.Kept.of(a), hist.Kept.of(b))
    da = {ev.pos: ev.decision for st in a.steps for ev in st.events if ev.decision != "rejected"}
    db = {ev.pos: ev.decision for st in b.steps for ev in st.events if ev.decision != "rejected"}
    want = np.array([float(da[p] != db[p]) for p in range(16)]).reshape(4, 4)
    assert np.array_equal(diff, want) and diff.sum() > 0
    assert np.all(hist.decision_difference(hist.Kept.of(a), hist.Kept.of(a)) == 0)


def test_a_run_keeps_no_trace_and_is_recorded_once(runs):
    """The history keeps each run's decision map and compression, never the trace (its weight, run after run, was
    the served app's growth); the newest run's traces are recognised by identity, copies are not."""
    h = hist.History()
    traces = {m: copy.deepcopy(t) for m, t in runs[0].items()}
    h.add(traces, {}, "generate")
    assert h.holds(traces) and not h.holds(runs[0]) and not h.holds({m: traces[m] for m in list(traces)[:1]})
    run = h.runs[-1]
    assert all(np.array_equal(run.kept[m].decisions, views.decision_map(t)[0], equal_nan=True)
               and run.kept[m].compression == t.summary["step_compression"] for m, t in traces.items())
    ref = weakref.ref(traces["csd"])
    del traces
    gc.collect()
    assert ref() is None and not h.holds(runs[0])              # the history did not keep the trace alive


def test_nll_of_an_empty_trace_is_nan():
    class Empty:
        def committing(self):
            return {}
    assert math.isnan(hist.target_nll(Empty()))
