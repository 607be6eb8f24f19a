"""scripts/engine_bench.py --tiny: every registered method under both noises gets a row of the Markdown table and of
the JSON, with its steps, a non-negative engine time and its host reads (the full run: docs/benchmarks.md)."""
import json
import subprocess
import sys
from pathlib import Path

import torch

from specviz.engine import registry
from specviz.engine.stub import StubState, StubTarget
from specviz.engine.syncs import OperatorCalls

ROOT = Path(__file__).resolve().parents[2]
STUB_OPS = 7                          # the stub forward's operator calls (scripts/engine_bench.py's docstring)


def test_tiny_bench_reports_every_method_and_noise(tmp_path):
    out = tmp_path / "bench.json"
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "engine_bench.py"), "--tiny", "--json", str(out)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    rows = json.loads(out.read_text())["rows"]
    assert [(r["method"], r["noise"]) for r in rows] == [(m, n) for m in registry.METHODS for n in ("papers", "keyed")]
    for r in rows:
        assert r["steps"] == 4 and r["ms"] >= 0 and r["fwd_ms"] >= 0 and r["syncs"] >= 1 and r["tokens"] >= 1
        assert r["syncs"] <= r["syncs_max"] and r["ops"] > STUB_OPS      # the engine's operators beside the stub's
    # the reads are counted after the run's first step (its tables, built once): AR reads once a step, LANTERN (its
    # neighbour table read in the first step) at most twice
    assert {r["syncs_max"] for r in rows if r["method"] == "ar"} == {1}
    assert all(r["syncs_max"] <= 2 for r in rows if r["method"] == "lantern")
    lines = [line for line in run.stdout.splitlines() if line.startswith("| 6x6, V=64 |")]
    assert len(lines) == len(rows)
    assert lines[0].split("|")[2].strip() == f"`{rows[0]['method']}`"
    assert f"| {rows[0]['syncs']:.1f} | {rows[0]['syncs_max']} | {rows[0]['ops']:.0f} |" in lines[0]


def test_operator_calls_count_the_stub_forward_s_seven():
    """engine/syncs.OperatorCalls counts every aten call: the stub's forward (the figure the script's docstring
    names) dispatches exactly STUB_OPS, and nothing is counted outside the block."""
    m, tokens, positions = StubTarget(64, (6, 6)), torch.tensor([1, 2, 3]), torch.arange(3)
    with OperatorCalls() as o:
        m.forward(StubState(), tokens, positions)
    torch.ones(3) + 1
    assert o.count == STUB_OPS


def test_engine_passes_reports_every_pass():
    """scripts/engine_passes.py (the floor docs/benchmarks.md quotes) prints one timed row per pass."""
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "engine_passes.py"), "--repeat", "3"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    rows = [line.split("|")[1:3] for line in run.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    names = [n.strip() for n, _ in rows[1:]]
    assert names[:4] == ["softmax of 16 rows", "cumsum of 15 rows", "entropy pass of 15 rows", "one small operator"]
    assert len(names) == 8 and all(float(v) >= 0 for _, v in rows[1:])
