"""scripts/gpu_bench.py --all --tiny: every layout, every method through the engine and the 4-method race
run on the CPU at tiny shapes; the card table, the HBM bound and the step's weight bytes are exact."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch

from specviz.engine.registry import METHODS
from specviz.models import layouts

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_bench.py"


def bench_module():
    spec = importlib.util.spec_from_file_location("gpu_bench", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    argv = ["--all", "--tiny", "--steps", "2", "--reps", "1", "--engine-steps", "1", "--json", str(out)]
    assert bench_module().main(argv) == 0
    return json.loads(out.read_text())


def test_all_tiny_reports_every_layout_method_and_the_race(report):
    assert report["device"] == "cpu" and report["card"] == "cpu" and report["tb_per_s"] is None and report["tiny"]
    got = {r["layout"]: r for r in report["layouts"]}
    assert list(got) == ["Janus-Pro-7B", "LlamaGen-XL", "Lumina-mGPT-7B"]
    assert [got[k]["grid"] for k in got] == [[8, 8], [8, 8], [4, 6]]
    for r in got.values():
        assert all(r["eager"][k] > 0 for k in ("ar_ms_cfg", "ar_ms_no_cfg", "window_ms", "tree_ms")), r["eager"]
        assert r["compiled"] is None and r["bound_ms"] is None                     # the CPU: no compile, no card
        assert list(r["engine"]) == list(METHODS), r["engine"]
        assert all(v["ms_per_step"] > 0 and v["steps"] >= 1 for v in r["engine"].values()), r["engine"]
    race = got["Janus-Pro-7B"]["race"]
    assert list(race) == ["ar", "sjd", "mcsjd", "csd"]
    assert race["ar"]["target_forwards"] == 64 and race["ar"]["step_compression"] == 1.0
    for v in race.values():
        assert v["tokens"] == 64 and v["step_compression"] == round(64 / v["target_forwards"], 4)
    assert "race" not in got["LlamaGen-XL"] and "race" not in got["Lumina-mGPT-7B"]


@pytest.mark.parametrize("name, want", [
    ("NVIDIA H100 80GB HBM3", ("H100 SXM", 3.35)), ("NVIDIA H200", ("H200", 4.8)),
    ("NVIDIA A100-SXM4-80GB", ("A100 80GB", 2.0)), ("NVIDIA A100 80GB PCIe", ("A100 80GB", 2.0)),
    ("NVIDIA H100 PCIe", ("unknown", None)), ("NVIDIA H100 NVL", ("unknown", None)),
    ("NVIDIA A100-SXM4-40GB", ("unknown", None)), ("Tesla T4", ("unknown", None))])
def test_the_card_table(name, want):
    assert layouts.card(name) == want


def test_the_hbm_bound_and_its_ratio():
    gb = bench_module()
    res = gb.with_bounds({"step_weight_bytes": 6_700_000_000, "eager": {"ar_ms_cfg": 4.0}, "compiled": None}, 3.35)
    assert res["bound_ms"] == pytest.approx(2.0, rel=1e-12)                   # 6.7 GB at 3.35 TB/s
    assert res["eager"]["ar_over_bound"] == pytest.approx(2.0, rel=1e-12)
    assert gb.with_bounds({"step_weight_bytes": 10, "eager": {"ar_ms_cfg": 1.0}}, None)["bound_ms"] is None


def test_step_weight_bytes_count_every_matrix_a_step_multiplies():
    lay = layouts.llamagen(True, "cpu", torch.float32)
    c = lay.model.gpt.cfg                                                     # dim 64, 2 layers, ffn, vocab 256
    per_layer = c.dim * 3 * c.dim + c.dim * c.dim + 3 * c.dim * c.ffn_hidden + 2 * c.dim
    assert lay.step_bytes == 4 * (c.n_layer * per_layer + c.dim + c.vocab_size * c.dim)


def test_no_compile_starts_after_the_budget(tmp_path):
    out = tmp_path / "b.json"
    argv = ["--family", "llamagen", "--tiny", "--compile-cpu", "--budget-s", "0", "--steps", "1", "--reps", "1",
            "--engine-steps", "1", "--json", str(out)]
    assert bench_module().main(argv) == 0
    (res,) = json.loads(out.read_text())["layouts"]
    assert res["compiled"] == {"skipped": "--budget-s 0 s spent before this layout's compile"}
    assert set(res["eager"]) == {"context", "ar_ms_cfg", "ar_ms_no_cfg", "window_ms", "tree_ms"}
