"""Bench and sweep: same prompts and seeds for every method; resumable JSONL; local and Ray give the same points."""
import json
import statistics
from pathlib import Path

import numpy as np
import pytest

from specviz.analysis import bench, bench_cli, front, quality, sweep
from specviz.render import pareto

HAVE_MODEL = (Path(__file__).resolve().parents[2] / "assets" / "target.safetensors").exists()
TIME_KEYS = {"seconds", "forward_seconds", "engine_seconds", "speedup_vs_ar", "peak_memory"}  # vary by process


def test_measure_on_a_tiny_model():
    from tests.support.toy import toy
    model, _ = toy(codes=8, grid=3)
    res = bench.measure(model, ["ar", "sjd", "csd"], [("red house", [0, 4, 8, 12, 16])], 2, {"window": 4},
                        progress=False)
    ar, sjd = res["methods"]["ar"], res["methods"]["sjd"]
    assert ar["step_compression"] == 1.0 and ar["images"] == 2 and ar["target_forwards"] == 9
    per_run = [r["step_compression"] for r in res["runs"]["sjd"]]              # positions / target forwards
    assert per_run == [round(9 / r["target_forwards"], 4) for r in res["runs"]["sjd"]]
    assert sjd["step_compression"] == round(statistics.median(per_run), 4) and "speedup_vs_ar" in sjd
    assert [r["seed"] for r in res["runs"]["csd"]] == [0, 1]
    table = bench_cli.markdown(res)
    assert table.count("\n") == 4 and "| sjd |" in table


def test_implausible_counts_committed_codes_the_target_finds_unlikely(monkeypatch):
    """The bench's implausible column: per image, the committed codes whose TARGET probability is below the
    threshold (not the draft's), averaged over images; checked against the traces themselves."""
    from specviz.engine.config import RunConfig
    from specviz.models.runner import run
    from tests.support.toy import toy
    assert bench.implausible([0.0005, 0.001, 0.5]) == 1                     # strictly below IMPLAUSIBLE_Q
    model, _ = toy(codes=8, grid=3)
    spec, prompt = "csd:lam=2,delta=0.95", ("red house", [0, 4, 8, 12, 16])
    traces = [run(RunConfig(method="csd", lam=2, delta=0.95, window=4, prompt=prompt[0], seed=s), model=model)
              for s in range(4)]
    qs = [[ev.p_target for _, ev in t.committing().values()] for t in traces]
    counts = lambda cut: [sum(q < cut for q in qq) for qq in qs]
    cuts = np.quantile(np.concatenate(qs), np.linspace(0.2, 0.8, 13))
    cut = next(float(c) for c in cuts if np.mean(counts(c)) != np.median(counts(c)))   # a mean/median mix-up fails
    monkeypatch.setattr(bench, "IMPLAUSIBLE_Q", cut)
    res = bench.measure(model, [spec], [prompt], 4, {"window": 4}, quality=False, progress=False)
    want = counts(cut)
    assert [r["implausible"] for r in res["runs"][spec]] == want and 0 < sum(want) < 4 * 9
    assert res["methods"][spec]["implausible"] == round(float(np.mean(want)), 3)


def test_prompt_set_is_fixed_and_mixes_held_out():
    from specviz.scenes import data
    a, b = bench.prompt_set(6), bench.prompt_set(6)
    assert a == b
    held = [data.is_held_out(data.scene_from_tokens(t)) for _, t in a]
    assert held == [True, False] * 3


def _strip(rows):
    return sorted((json.dumps(r["point"], sort_keys=True),
                   {k: v for k, v in r["result"].items() if k not in TIME_KEYS}) for r in rows)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_MODEL, reason="assets/target.safetensors not trained yet")
def test_sweep_local_resumable_and_ray_agree(tmp_path):
    points = sweep.sweep_points(["lam", "delta"], ["0,0.2", "0.9"])
    assert points == [{"lam": 0, "delta": 0.9}, {"lam": 0.2, "delta": 0.9}]
    prompts = bench.prompt_set(2)
    local = tmp_path / "local.jsonl"
    rows, new = sweep.sweep("csd", points[:1], prompts, 1, local)
    assert new == 1
    rows, new = sweep.sweep("csd", points, prompts, 1, local)          # resumes: only the missing point runs
    assert new == 1 and len(rows) == 2
    pytest.importorskip("ray")
    remote = tmp_path / "ray.jsonl"
    rrows, _ = sweep.sweep("csd", points, prompts, 1, remote, ray="auto")
    import ray
    ray.shutdown()
    assert _strip(rows) == _strip(rrows)
    fig = pareto.figure(front.plot(rows))
    fig.savefig(tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_method_specs():
    assert bench.parse_spec("csd:lam=0.2,delta=0.8,init=repeat_horizon") == (
        "csd", {"lam": 0.2, "delta": 0.8, "init": "repeat_horizon"})
    assert bench.parse_spec("ar") == ("ar", {})


@pytest.mark.slow                      # ~25 s here: transformers' CLIP import and its offline look-ups
def test_a_clip_that_cannot_be_loaded_is_one_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(FileNotFoundError, match="--clip nobody/no-such-clip"):
        quality.load_clip("nobody/no-such-clip")
    with pytest.raises(FileNotFoundError, match="--clip"):
        quality.load_clip(str(tmp_path))


def test_relaxed_low_mid_counts_relaxed_tokens_by_the_detail_of_their_patch():
    img = np.zeros((8, 8, 3), np.uint8)                  # 2x2 grid of 4x4 patches; patch 3 is striped (high detail)
    img[4:, 4:, 0] = np.array([[0, 255] * 2] * 4)
    img[:4, 4:] = 100 + np.arange(4, dtype=np.uint8)[None, :, None] * 2   # patch 1: mild gradient (low detail)
    runs = [{"relaxed_positions": [0, 1, 3]}, {"relaxed_positions": [3]}, {"relaxed_positions": []}]
    assert quality.relaxed_low_mid(np.stack([img] * 3), runs, (2, 2)) == 0.5            # 2 of 4 relaxed tokens
    assert quality.relaxed_low_mid(np.stack([img]), [{"relaxed_positions": []}], (2, 2)) is None
    assert quality.low_mid(np.stack([img] * 3), (2, 2)) == 0.75                          # the base rate: 3 of 4 patches
