"""`specviz bench --table paper`: the papers' columns from the rows, a 64-token step, and the command
end to end on a tiny LlamaGen with a tiny CLIP and FID on a tiny feature extractor."""
import json
import statistics

import numpy as np
import pytest
import torch

from specviz.__main__ import main as cli
from specviz.analysis import bench, paper, prompts, quality
from specviz.models.scenes import tiny
from tests.analysis.test_bench_quality import TinyFeatures, direct_fid, images

torch.set_num_threads(1)


def test_acceptance_as_vllm_reports_it():
    mean, rates = paper.acceptance([0, 2, 1, 0, 1])                    # steps committing 1, 1, 2, 4 tokens
    assert mean == 2.0                                                 # (1 + 1 + 2 + 4) / 4 = 1 + 4 accepted / 4
    assert rates == [0.5, 0.25, 0.25]                                  # >= 2, >= 3, >= 4 tokens committed
    assert paper.acceptance([0]) == (None, [])


def test_a_step_that_commits_64_tokens_is_benched():
    """sjdpac:window=64 on a one-code model commits 64 tokens in one step (index 64 of its histogram): the sum
    once had 64 bins and failed; the bins come from the window knob's upper bound."""
    assert bench.hist_bins() == int(bench.knob("window").hi) + 1 == 65
    model = tiny(codes=1, grid=9, seed=0)
    spec = "sjdpac:window=64,pac_width=1,pac_depth=1"
    res = bench.measure(model, ["ar", spec], [("red house", [0, 4, 8, 12, 16])], 2, {"temperature": 0.0},
                        quality=False, progress=False)
    hist = res["methods"][spec]["accepted_hist"]
    assert len(hist) == 65 and hist[64] == 2 and sum(k * h for k, h in enumerate(hist)) == 2 * (81 - 1)
    row = next(r for r in paper.rows(res) if r["method"] == spec)
    assert row["mean_accepted_length"] == round(2 * 80 / sum(hist), 4) and len(row["acceptance_per_position"]) == 63
    assert bench.pooled_hist([{"accepted_hist": [0] * 70 + [1]}]) == [0] * 70 + [1]     # wider than the bins


def test_paper_rows_from_a_measure():
    model = tiny(codes=8, grid=3, seed=0)
    res = bench.measure(model, ["ar", "sjd"], [("red house", [0, 4, 8, 12, 16]), ("blue car", [1, 5, 9, 13, 17])],
                        2, {"window": 4}, quality=False, progress=False)
    rows = {r["method"]: r for r in paper.rows(res)}
    runs = res["runs"]
    ratios = [a["seconds"] / s["seconds"] for a, s in zip(runs["ar"], runs["sjd"])]
    assert rows["sjd"]["latency_speedup"] == round(statistics.median(ratios), 4) and rows["ar"]["latency_speedup"] == 1
    assert rows["sjd"]["step_compression"] == round(statistics.mean(r["step_compression"] for r in runs["sjd"]), 4)
    steps = sum(r["target_forwards"] - 1 for r in runs["sjd"])                 # verification steps (not the prefill)
    assert rows["sjd"]["mean_accepted_length"] == round((9 - 1) * 4 / steps, 4)
    assert rows["ar"]["mean_accepted_length"] == 1.0 and rows["ar"]["acceptance_per_position"] == []
    assert rows["sjd"]["peak_memory_bytes"] == max(r["peak_memory"] for r in runs["sjd"]) > 0
    for m in ("ar", "sjd"):                       # one image's time: the forwards' and the engine's, medians
        for k in ("forward_seconds", "engine_seconds"):
            assert rows[m][k] == round(statistics.median(r[k] for r in runs[m]), 4), (m, k)
        assert 0 < rows[m]["forward_seconds"] <= rows[m]["forward_seconds"] + rows[m]["engine_seconds"]
    table = paper.markdown(res)
    ar = rows["ar"]
    assert table.splitlines()[2].startswith(f"| ar | 1.00x | {ar['forward_seconds']:.3f} | {ar['engine_seconds']:.3f}"
                                            " | 1.00x | 1.00 |") and table.count("\n") == 3


def test_speedup_pairs_images_by_prompt_and_seed_not_by_order():
    ar = [{"index": 0, "seed": 0, "seconds": 4.0}, {"index": 1, "seed": 0, "seconds": 9.0}]
    other = [dict(ar[1], seconds=3.0), dict(ar[0], seconds=1.0)]          # the other order (a resumed file)
    common = {"target_forwards": 1, "step_compression": 1, "mean_accepted": 1, "nll": 0, "tv_cost": 0,
              "implausible": 0, "relaxed": 0, "accepted_drafts": 0, "accepted_hist": [0, 1], "peak_memory": 1}
    agg = bench.aggregate([common | x for x in other], ar)
    assert agg["speedup_vs_ar"] == 3.5                                    # median of 9/3 and 4/1


@pytest.fixture(scope="module")
def llamagen(tmp_path_factory):
    import tests.support.llamagen_tiny as lt
    return lt.converted_pair(tmp_path_factory.mktemp("lg"))[0]


def test_the_command_end_to_end_on_tiny_checkpoints(llamagen, tmp_path, monkeypatch, capsys):
    from tests.support.clip_tiny import make_tiny_clip
    clip = make_tiny_clip(tmp_path / "clip", seed=1)
    for i, im in enumerate(images(6, seed=50, size=(32, 32), lo=60)):
        im.save(tmp_path / f"ref{i}.png")
    net = TinyFeatures()
    monkeypatch.setattr(quality, "FID_FEATURE", net)                     # Inception needs torch-fidelity + weights
    out = tmp_path / "res.json"
    assert cli(["bench", "--prompts", "parti", "--limit", "6", "--model", llamagen, "--clip", str(clip),
                "--fid-ref", str(tmp_path), "--table", "paper", "--methods", "ar", "sjd", "--seeds", "1",
                "--json", str(out), "--set", "window=4"]) == 0
    table = capsys.readouterr().out
    assert "| method | latency speedup | forward s | engine s | step compression |" in table and "| sjd |" in table
    res = json.loads(out.read_text())
    assert res["prompts"]["used"] == 6 and [r["caption"] for r in res["runs"]["ar"]] == prompts.load("parti")[:6]
    model = quality.load_clip(str(clip), local_only=True)
    from specviz.models import load_model
    lg = load_model(llamagen, "cpu")
    for m in ("ar", "sjd"):
        ims = [lg.decode_image(torch.tensor(r["codes"])).convert("RGB") for r in res["runs"][m]]
        caps = [r["caption"] for r in res["runs"][m]]
        assert res["methods"][m]["clip"] == round(float(np.mean(quality.clip_scores(ims, caps, model))), 4)
        ref = quality.reference_images(tmp_path, ims[0].size)
        feats = lambda xs: net(torch.from_numpy(np.stack([np.asarray(i) for i in xs])).permute(0, 3, 1, 2)).numpy()
        want = direct_fid(feats(ims).astype(np.float64), feats(ref).astype(np.float64))
        assert res["methods"][m]["fid"] == pytest.approx(want, rel=1e-3)
    assert [r["method"] for r in res["paper"]] == ["ar", "sjd"]
    assert res["paper"][1]["fid"] == res["methods"]["sjd"]["fid"]


def test_zipar_and_pjd_rows_beside_the_others():
    """The bench and the paper table list zipar and pjd beside AR and SJD: step compression from their
    own traces (positions / target forwards), and no acceptance at a draft position for ZipAR, which drafts
    nothing (its steps' extra tokens are other rows' samples); PJD, which drafts, has its rates."""
    from specviz.engine.config import RunConfig  # noqa: PLC0415 - the runs the rows are checked against
    from specviz.models.runner import run  # noqa: PLC0415 - (as above)
    model = tiny(codes=8, grid=6, seed=0)
    specs = ["ar", "sjd", "zipar:zipar_w=2", "pjd:pjd_c=2"]
    res = bench.measure(model, specs, [("red house", [0, 4, 8, 12, 16])], 1, {"window": 4}, quality=False,
                        progress=False)
    rows = {r["method"]: r for r in paper.rows(res)}
    for spec, kw in (("zipar:zipar_w=2", dict(method="zipar", zipar_w=2)), ("pjd:pjd_c=2", dict(method="pjd",
                                                                                                  pjd_c=2))):
        t = run(RunConfig(prompt="red house", seed=0, window=4, **kw), model=model)
        assert rows[spec]["step_compression"] == round(36 / t.summary["target_forwards"], 4) > 1, spec
    assert rows["zipar:zipar_w=2"]["acceptance_per_position"] == [] and rows["pjd:pjd_c=2"]["acceptance_per_position"]
    table = paper.markdown(res).splitlines()
    assert [line.split(" | ")[0] for line in table[2:]] == [f"| {s}" for s in specs]
