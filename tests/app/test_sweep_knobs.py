"""Every sweepable knob of every method reaches the sweep's plot: the labels are asked of the knob's record (its symbol,
else its name), so a knob without a label (gsd_group, lantern_k, ...) no longer crashes the plot after all the
measuring, from the CLI or from the app's Sweep tab."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from matplotlib.text import Annotation

from specviz.analysis import front
from specviz.app import sweep_tab
from specviz.engine.registry import knob
from specviz.render import pareto

ROOT = Path(__file__).resolve().parents[2]
CASES = [(m, k) for m, ks in sweep_tab.params().items() for k in ks]


def test_every_method_with_a_rule_knob_is_swept():
    assert {m for m, _ in CASES} >= {"csd", "gsd", "cascade", "lantern", "lanternpp"}
    assert ("gsd", "gsd_group") in CASES and ("lantern", "lantern_k") in CASES


@pytest.mark.parametrize(("method", "name"), CASES)
def test_the_plot_draws_a_sweep_of_every_knob(method, name):
    k = knob(name)
    lo = k.lo if k.lo is not None else 0
    values = [k.kind(lo + 1), k.kind(lo + 2)]
    rows = [{"method": "ar", "point": {}, "result": {"step_compression": 1.0, "implausible": 4.0}}]
    rows += [{"method": method, "point": {name: v}, "result": {"step_compression": 1.5 + i, "implausible": 5.0 + i}}
             for i, v in enumerate(values)]
    fig = pareto.figure(front.plot(rows, "implausible", frozenset()))
    labels = {t.get_text() for t in fig.axes[0].texts if isinstance(t, Annotation)}
    assert labels == {"ar"} | {f"{k.symbol or name}={v:g}" for v in values}


def test_a_knob_s_symbol_falls_back_to_its_name():
    assert knob("lam").sym == "λ" and knob("tau_pos").sym == "τ_pos" and knob("gsd_gap").sym == "gsd_gap"


@pytest.mark.slow
def test_the_cli_sweeps_a_knob_without_a_label(tmp_path):
    out = tmp_path / "sw.jsonl"
    run = subprocess.run([sys.executable, "-m", "specviz", "sweep", "--method", "gsd", "--param", "gsd_group",
                          "--values", "4,8", "--prompts", "2", "--seeds", "1", "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert out.with_suffix(".png").stat().st_size > 0
    assert [json.loads(line)["point"] for line in out.read_text().splitlines()] == [{"gsd_group": 4}, {"gsd_group": 8}]


@pytest.mark.slow
def test_the_sweep_tab_sweeps_a_knob_without_a_label(tmp_path):
    fig, table, _ = sweep_tab.run_sweep("lantern", "lantern_k", "4, 8", 2, str(tmp_path))
    assert [r[0] for r in table] == ["ar", "sjd", "lantern lantern_k=4", "lantern lantern_k=8"] and fig.axes
