"""The keyed sweep's paired measure: every bench row under keyed noise carries its changed-token count
against AR's tokens for the same image, the aggregate its mean and paired standard error, and the trade-off plot
draws ±1 SE bars (analysis/bench.py, analysis/sweep.py, render/pareto.py)."""
from __future__ import annotations

import statistics

import numpy as np
import pytest

from specviz.analysis import bench, front, paired
from specviz.render import pareto
from tests.support.toy import run, toy

BASE = {"noise": "keyed", "window": 4, "delta": 1.0}
PROMPTS = [("red house", []), ("blue sky over snow", []), ("a tree", [])]


@pytest.fixture(scope="module")
def measured():
    model, _ = toy(codes=5, grid=3, sharpen=0.5)
    return model, bench.measure(model, ["csd:lam=0.0", "csd:lam=2.0"], PROMPTS, 2, BASE, quality=False,
                                progress=False)


def test_rows_carry_the_changed_count_against_ar(measured):
    model, res = measured
    for spec in ("csd:lam=0.0", "csd:lam=2.0"):
        for row in res["runs"][spec]:
            ar = run(model, None, method="ar", prompt=row["caption"], seed=row["seed"], noise="keyed").tokens
            assert row["changed"] == len(paired.changed_positions(row["codes"], ar))
    assert all(r["changed"] == 0 for r in res["runs"]["csd:lam=0.0"])
    assert any(r["changed"] > 0 for r in res["runs"]["csd:lam=2.0"])


def test_aggregate_has_mean_and_paired_standard_error(measured):
    _, res = measured
    rows, agg = res["runs"]["csd:lam=2.0"], res["methods"]["csd:lam=2.0"]
    counts = [r["changed"] for r in rows]
    assert agg["changed"] == pytest.approx(statistics.mean(counts), abs=1e-4)
    assert agg["changed_se"] == pytest.approx(statistics.stdev(counts) / len(counts) ** 0.5, abs=1e-4)
    assert agg["identical_share"] == pytest.approx(sum(c == 0 for c in counts) / len(counts), abs=1e-4)
    assert res["methods"]["csd:lam=0.0"]["changed_se"] == 0.0


def test_papers_rows_have_no_paired_measure():
    model, _ = toy(codes=5, grid=3, sharpen=0.5)
    res = bench.measure(model, ["csd"], PROMPTS[:1], 1, {"window": 4}, quality=False, progress=False)
    assert "changed" not in res["runs"]["csd"][0] and "changed" not in res["methods"]["csd"]


def test_pareto_draws_the_standard_error_bars(measured):
    _, res = measured
    rows = [{"method": "csd", "point": {"lam": float(s.split("=")[1])}, "result": res["methods"][s]}
            for s in ("csd:lam=0.0", "csd:lam=2.0")]
    fig = pareto.figure(front.plot(rows, "changed", lossless=frozenset()))
    ax = fig.axes[0]
    bars = [c for c in ax.collections if c.__class__.__name__ == "LineCollection"]
    spans = sorted(float(np.ptp(seg[:, 1])) for b in bars for seg in b.get_segments())
    assert spans == pytest.approx(sorted(2 * r["result"]["changed_se"] for r in rows), abs=1e-6)
    assert "standard error" in ax.get_ylabel()


def test_sweep_rows_record_the_shared_noise_and_resume(tmp_path, monkeypatch):
    from specviz.analysis import sweep
    seen = []

    def fake(method, p, prompts, seeds, model_name):
        seen.append(p)
        return p, {"step_compression": 2.0, "changed": 1.0, "changed_se": 0.5}
    monkeypatch.setattr(sweep, "_point", fake)
    out = tmp_path / "s.jsonl"
    pts = sweep.sweep_points(["lam"], ["0.5,1"])
    rows, new = sweep.sweep("csd", pts, PROMPTS, 1, out, base={"noise": "keyed"})
    assert new == 2 and all(p["noise"] == "keyed" for p in seen)
    assert [r["point"] for r in rows] == pts and all(r["base"] == {"noise": "keyed"} for r in rows)
    assert sweep.sweep("csd", pts, PROMPTS, 1, out, base={"noise": "keyed"})[1] == 0      # resumed: nothing new
    assert sweep.sweep("csd", pts, PROMPTS, 1, out)[1] == 2                              # papers' noise: new points
