"""The Sweep tab under the page's keyed noise, through the Run button's handler (sweep_tab.handler), on a toy model:
"tokens changed vs AR" and "PSNR vs AR" are plotted with their standard errors, the plot and the table say the
noise, and in the papers' mode both measures are refused before any work (the tab failed after 33 s with
"Unexpected error (KeyError): 'changed'")."""
from __future__ import annotations

import math
import statistics
from functools import lru_cache

import gradio as gr
import numpy as np
import pytest

from specviz.analysis import front, paired, paired_run, sweep
from specviz.app import sweep_tab
from tests.support.toy import run, toy


@lru_cache(maxsize=1)
def _model():
    return toy(codes=5, grid=3, sharpen=0.5)[0]


@pytest.fixture
def on_toy(monkeypatch):
    monkeypatch.setattr(sweep, "load_model", lambda name: _model())
    return _model()


def _bars(fig) -> list[tuple[float, float, float]]:
    """(x, centre, half-span) of every error bar drawn."""
    ax = fig.axes[0]
    out = []
    for c in ax.collections:
        if c.__class__.__name__ == "LineCollection":
            for seg in c.get_segments():
                out.append((float(seg[0, 0]), float(seg[:, 1].mean()), float(np.ptp(seg[:, 1])) / 2))
    return sorted(out)


def _flat(triples) -> list[float]:
    return [v for t in triples for v in t]


def test_a_keyed_sweep_from_the_tab_plots_changed_vs_ar_with_error_bars(on_toy, tmp_path):
    fig, table, points = sweep_tab.handler(str(tmp_path))("csd", "lam", "0, 2", 3, "changed", "keyed", progress=None)
    assert [r[0] for r in table] == ["ar", "sjd", "csd lam=0", "csd lam=2"]
    rows = sweep.read_rows(next(tmp_path.glob("*/sweep.jsonl")))
    assert all(r["base"] == {"noise": "keyed"} for r in rows)
    # the changed counts, recomputed from AR's and CSD's keyed runs of the same captions
    caps = [c for c, _ in sweep_tab.bench.prompt_set(3)]
    counts = []
    for cap in caps:
        ar = run(on_toy, None, method="ar", prompt=cap, seed=0, noise="keyed").tokens
        mine = run(on_toy, None, method="csd", lam=2.0, prompt=cap, seed=0, noise="keyed").tokens
        counts.append(len(paired.changed_positions(mine, ar)))
    lam2 = rows[-1]["result"]
    assert lam2["changed"] == pytest.approx(statistics.mean(counts), abs=1e-4) and statistics.stdev(counts) > 0
    assert lam2["changed_se"] == pytest.approx(statistics.stdev(counts) / math.sqrt(3), abs=1e-4)
    assert table[-1][7] == f"{lam2['changed']:.2f} ± {lam2['changed_se']:.2f}" and table[0][7] == "0.00 ± 0.00"
    want = sorted((r["result"]["step_compression"], r["result"]["changed"], r["result"]["changed_se"]) for r in rows)
    assert _flat(_bars(fig)) == pytest.approx(_flat(want), abs=1e-6)
    ax = fig.axes[0]
    assert "tokens changed vs AR" in ax.get_ylabel().replace("\n", " ")
    assert ax.get_title(loc="left").startswith("keyed noise")


def test_the_psnr_measure_over_the_images_that_differ(on_toy, tmp_path):
    fig, table, _ = sweep_tab.handler(str(tmp_path))("csd", "lam", "0, 2", 3, "psnr", "keyed", progress=None)
    rows = sweep.read_rows(next(tmp_path.glob("*/sweep.jsonl")))
    dbs = []
    for cap in [c for c, _ in sweep_tab.bench.prompt_set(3)]:
        mine = run(on_toy, None, method="csd", lam=2.0, prompt=cap, seed=0, noise="keyed").tokens
        ar = run(on_toy, None, method="ar", prompt=cap, seed=0, noise="keyed").tokens
        db, _ = paired.pixel_diff(paired_run.image(on_toy, mine), paired_run.image(on_toy, ar))
        dbs += [db] if math.isfinite(db) else []
    res = rows[-1]["result"]
    assert res["psnr_images"] == len(dbs) >= 2
    assert res["psnr"] == pytest.approx(statistics.mean(dbs), abs=1e-4)
    assert res["psnr_se"] == pytest.approx(statistics.stdev(dbs) / math.sqrt(len(dbs)), abs=1e-4)
    assert all("psnr" not in r["result"] and r["result"]["psnr_images"] == 0 for r in rows[:3])   # identical to AR
    assert table[0][8] == "identical" and table[-1][8].endswith(f"({len(dbs)} differ)")
    assert _bars(fig) and _flat(_bars(fig)) == pytest.approx([res["step_compression"], res["psnr"], res["psnr_se"]],
                                                             abs=1e-6)
    title = fig.axes[0].get_title(loc="left").replace("\n", " ")
    assert "not drawn (identical to AR's image at every caption, PSNR infinite): ar, sjd, csd λ=0" in title
    assert "higher is better" in fig.axes[0].get_ylabel().replace("\n", " ")


def test_the_paired_measures_need_keyed_noise_and_are_refused_at_once(monkeypatch, tmp_path):
    monkeypatch.setattr(sweep, "_point", lambda *a: pytest.fail("a refused sweep ran a point"))
    for measure in ("changed", "psnr"):
        with pytest.raises(gr.Error, match="under the same keyed noise: set Noise to keyed"):
            sweep_tab.handler(str(tmp_path))("csd", "lam", "0,2", 2, measure, "papers", progress=None)
    with pytest.raises(gr.Error, match="noise must be one of papers, keyed"):
        sweep_tab.handler(str(tmp_path))("csd", "lam", "0,2", 2, "nll", "loud", progress=None)


def test_papers_sweep_says_its_noise_and_leaves_the_keyed_columns_empty(monkeypatch, tmp_path):
    seen = []

    def fake(method, p, prompts, seeds, model_name):
        seen.append(p)
        return p, {"step_compression": 1.5, "implausible": 1.0, "nll": 2.0, "tv_cost": 0.1, "seconds": 0.1}
    monkeypatch.setattr(sweep, "_point", fake)
    fig, table, _ = sweep_tab.handler(str(tmp_path))("csd", "lam", "1", 2, "implausible", "papers", progress=None)
    assert all("noise" not in p for p in seen) and all(r[7:] == [None, None] for r in table)
    assert fig.axes[0].get_title(loc="left").startswith("papers' noise (each method draws its own)")


def test_the_cli_refuses_a_paired_measure_without_keyed_noise(monkeypatch, capsys, tmp_path):
    from specviz.__main__ import main  # the CLI entry: only this test drives it
    monkeypatch.setattr(sweep, "_point", lambda *a: pytest.fail("a refused sweep ran a point"))
    assert main(["sweep", "--param", "lam", "--values", "1", "--measure", "psnr", "--out",
                 str(tmp_path / "s.jsonl")]) == 2
    assert "--measure psnr compares each image with AR's under the same keyed noise: add --noise keyed" in \
        capsys.readouterr().err


def test_the_front_keeps_the_highest_psnr():
    rows = [{"method": "csd", "point": {"lam": lam}, "result": {"step_compression": x, "psnr": y, "psnr_se": 0.0}}
            for lam, (x, y) in {1.0: (2.0, 30.0), 2.0: (2.5, 25.0), 4.0: (2.4, 20.0)}.items()]
    plot = front.plot(rows, "psnr", frozenset())
    assert [[p.label for p in r] for r in plot.runs] == [["λ=2", "λ=1"]]       # λ=4: slower and worse than λ=2


def test_rows_without_the_measure_are_listed_with_their_reason():
    """An identical point (psnr_images 0), a keyed row from before the pixel measure, a papers' row: each named in
    the title with why it is not drawn."""
    res = {"step_compression": 2.0, "changed": 1.0, "changed_se": 0.1}
    rows = [{"method": "csd", "point": {"lam": 0.0}, "result": {**res, "psnr_images": 0}, "base": {"noise": "keyed"}},
            {"method": "csd", "point": {"lam": 1.0}, "result": res, "base": {"noise": "keyed"}},
            {"method": "csd", "point": {"lam": 2.0}, "result": {"step_compression": 2.5}}]
    notes = front.plot(rows, "psnr", frozenset()).notes
    assert notes[:4] == ("keyed and papers noise (rows mixed)",
                         "not drawn (identical to AR's image at every caption, PSNR infinite): csd λ=0",
                         "not drawn (not measured): csd λ=1", "not drawn (no keyed pairing with AR): csd λ=2")
