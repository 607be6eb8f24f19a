"""The atlas under keyed noise (docs/atlas.md, "Same image as AR"): every row's paired measures are those of
analysis/paired.py computed directly from the two saved traces (the run's and AR's of the same prompt and seed) and
their decoded images; the summary's means and standard errors and the "changed vs AR" map are recomputed from the
rows' traces; the paired figure draws exactly those numbers; with the papers' noise nothing of it appears."""
from __future__ import annotations

import json
import math
import re
import statistics
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
from matplotlib.container import BarContainer

from specviz.analysis import atlas, atlas_paired, atlas_run, paired
from specviz.core.trace import Trace
from specviz.render import atlas_fig
from tests.support.toy import toy

SPECS = ["ar", "sjd:window=4", "csd:lam=2.0,delta=1.0,window=4"]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "atlas.md"


def build(noise: str = "keyed", specs=SPECS, prompts: int = 3, seeds: int = 2):
    """A tiny atlas on the toy, built now (never cached: the mutation check runs it under each variant); returns
    (model, rows, {(spec, prompt, seed): trace} from the saved trace files)."""
    model, factory = toy(codes=5, grid=3, sharpen=0.5)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "t").mkdir()
        rows, _ = atlas_run.collect(atlas_run.jobs(specs, prompts, seeds, noise), tmp / "a.jsonl",
                                    lambda: (model, factory), trace_dir=tmp / "t")
        traces = {(r["spec"], r["prompt"], r["seed"]): Trace.load(tmp / "t" / f"{atlas_run.trace_name(r)}.json")
                  for r in rows}
    return model, rows, traces


def pixels(model, trace):
    return np.asarray(model.decode_image(torch.tensor(trace.tokens)).convert("RGB"))


def test_keyed_rows_are_the_paired_measures_of_their_two_traces():
    model, rows, traces = build()
    assert len(rows) == 3 * 3 * 2
    for r in rows:
        mine, ar = traces[(r["spec"], r["prompt"], r["seed"])], traces[("ar", r["prompt"], r["seed"])]
        assert mine.config["noise"] == ar.config["noise"] == "keyed" and ar.config["seed"] == r["seed"]
        want = paired.compare(mine, ar, pixels(model, mine), pixels(model, ar))
        assert r["changed"] == want.count and r["changed_positions"] == list(want.changed)
        assert r["first_changed"] == want.first
        assert r["mean_abs"] == pytest.approx(want.mean_abs, abs=1e-12)
        assert r["psnr"] == (None if math.isinf(want.psnr) else pytest.approx(want.psnr, abs=1e-9))
    csd = [r for r in rows if r["spec"].startswith("csd")]
    assert any(r["changed"] > 0 and r["mean_abs"] > 0 for r in csd)             # the relaxed rows do change
    assert all(r["changed"] == 0 and r["psnr"] is None for r in rows if not r["spec"].startswith("csd"))


def test_keyed_summary_and_map_from_the_rows():
    _, rows, traces = build()
    result = atlas.aggregate(rows)
    assert list(result["paired"]) == SPECS
    for spec in SPECS:
        rs = [r for r in rows if r["spec"] == spec]
        s = result["paired"][spec]
        counts = [len(paired.changed_positions(traces[(spec, r["prompt"], r["seed"])].tokens,
                                               traces[("ar", r["prompt"], r["seed"])].tokens)) for r in rs]
        assert s["images"] == len(rs) == 6 and s["changed"] == pytest.approx(statistics.mean(counts))
        assert s["changed_se"] == pytest.approx(statistics.stdev(counts) / math.sqrt(len(counts)))
        assert s["identical_share"] == pytest.approx(sum(c == 0 for c in counts) / len(counts))
        assert s["changed_images"] == sum(c > 0 for c in counts)
        firsts = [r["first_changed"] for r in rs if r["changed"]]
        psnrs = [r["psnr"] for r in rs if r["psnr"] is not None]
        for k, vals in (("first_changed", firsts), ("psnr", psnrs), ("mean_abs", [r["mean_abs"] for r in rs])):
            if not vals:
                assert s[k] is None and s[k + "_se"] is None
                continue
            assert s[k] == pytest.approx(statistics.mean(vals))
            se = statistics.stdev(vals) / math.sqrt(len(vals)) if len(vals) > 1 else 0.0
            assert s[k + "_se"] == pytest.approx(se)
        share = np.zeros(9)
        for r in rs:
            share += [a != b for a, b in zip(traces[(spec, r["prompt"], r["seed"])].tokens,
                                             traces[("ar", r["prompt"], r["seed"])].tokens)]
        np.testing.assert_allclose(np.array(result["maps"][spec]["changed"]).ravel(), share / len(rs))
    assert result["paired"]["csd:lam=2.0,delta=1.0,window=4"]["changed"] > 0
    assert result["paired"]["sjd:window=4"]["changed"] == 0 and result["paired"]["ar"]["identical_share"] == 1.0


def test_paired_figure_and_map_draw_the_atlas_numbers():
    _, rows, _ = build()
    result = atlas.aggregate(rows)
    fig = atlas_fig.paired_figure(result)
    for ax, k in zip(fig.axes, atlas_paired.WITH_SE):
        bars = next(c for c in ax.containers if isinstance(c, BarContainer))
        heights = [b.get_height() for b in bars]
        want = [np.nan if result["paired"][m][k] is None else result["paired"][m][k] for m in SPECS]
        np.testing.assert_allclose(heights, want)
        segs = [np.asarray(g) for g in bars.errorbar.lines[2][0].get_segments()]
        spans = [float(np.ptp(g[:, 1])) for g in segs if g.ndim == 2 and np.isfinite(g).all()]
        se = [result["paired"][m][k + "_se"] for m in SPECS if result["paired"][m][k] is not None]
        np.testing.assert_allclose(sorted(spans), sorted(2 * v for v in se), atol=1e-9)
    maps = atlas_fig.maps_figure(result)
    keys = atlas_fig.map_keys(result)
    assert keys[-1] == "changed"
    for i, m in enumerate(SPECS):
        drawn = maps.axes[i * len(keys) + len(keys) - 1].images[0].get_array()
        np.testing.assert_array_equal(np.asarray(drawn), np.array(result["maps"][m]["changed"]))
    assert "6 images per method" in fig._suptitle.get_text() and "±1 standard error" in fig._suptitle.get_text()
    table = {line.split(" | ")[0].strip("| "): line.strip("|").split(" | ")[1:]
             for line in atlas_paired.markdown(result).splitlines()[2:]}
    assert list(table) == SPECS
    for m, cells in table.items():
        for (k, _), cell in zip(atlas_paired.SUMMARY, cells):
            v = result["paired"][m][k]
            if v is None:
                assert cell.strip() == ""
            elif k in atlas_paired.WITH_SE:
                mean, se = (float(x) for x in cell.split(" ± "))
                assert mean == pytest.approx(v, abs=0.005) and se == pytest.approx(result["paired"][m][k + "_se"],
                                                                                  abs=0.005)
            else:
                assert float(cell) == pytest.approx(v, abs=0.005)


def test_papers_noise_changes_nothing_and_claims_nothing(tmp_path):
    _, rows, _ = build("papers", specs=["ar", "csd:lam=2.0,delta=1.0,window=4"], prompts=2, seeds=1)
    assert all("noise" not in r and not set(atlas_paired.ROW_KEYS) & set(r) for r in rows)
    assert atlas_run.jobs(["ar"], 1, 1) == [{"spec": "ar", "prompt": atlas_run.jobs(["ar"], 1, 1)[0]["prompt"],
                                             "seed": 0}]
    assert atlas.key(rows[0]) == f"{rows[0]['spec']}|{rows[0]['prompt']}|{rows[0]['seed']}"
    result = atlas.aggregate(rows)
    assert "paired" not in result and all("changed" not in v for v in result["maps"].values())
    assert atlas_paired.markdown(result) == "" and atlas_fig.map_keys(result) == atlas.MAP_KEYS
    paths, figs = atlas_fig.export(result, tmp_path / "a")
    assert "paired" not in figs and not any("paired" in p.name for p in paths)


def test_keyed_and_papers_rows_share_a_file_without_colliding():
    keyed, papers = atlas_run.jobs(["ar"], 1, 1, "keyed")[0], atlas_run.jobs(["ar"], 1, 1)[0]
    assert keyed["noise"] == "keyed" and atlas.key(keyed) != atlas.key(papers)


def test_docs_name_the_row_keys_and_the_summary():
    """docs/atlas.md's sentence on the keyed row names exactly the row's paired keys, and its table the summary's."""
    text = DOCS.read_text()
    sentence = re.search(r"Under `--noise keyed` every row also carries ([^.]*)\.", text).group(1)
    assert re.findall(r"`(\w+)`", sentence) == list(atlas_paired.ROW_KEYS)
    for k, words in atlas_paired.SUMMARY:
        assert f"| `{k}` | {words}" in text, k


@pytest.mark.slow
@pytest.mark.skipif(not (Path(__file__).resolve().parents[2] / "assets" / "target.safetensors").exists(),
                    reason="assets/target.safetensors not trained yet")
def test_atlas_cli_keyed_on_scenes(tmp_path, capsys):
    """`python -m specviz atlas --noise keyed` on scenes: the JSON's paired entry from its rows, the rows from their
    traces, the paired figure written and its table printed."""
    from specviz.__main__ import main  # the CLI module loads the whole stack: only this test needs it
    from specviz.models import load_model  # the scenes weights: only this test decodes with them
    out = tmp_path / "k.jsonl"
    assert main(["atlas", "--methods", "ar", "sjd", "csd", "--prompts", "2", "--seeds", "1", "--noise", "keyed",
                 "--out", str(out), "--traces", str(tmp_path / "t")]) == 0
    result = json.loads(out.with_suffix(".json").read_text())
    rows = atlas_run.read_rows(out)
    assert len(rows) == 6 and all(r["noise"] == "keyed" for r in rows)
    assert result["paired"] == atlas.aggregate(rows)["paired"]
    model = load_model("scenes")
    for r in rows:
        mine = Trace.load(tmp_path / "t" / f"{atlas_run.trace_name(r)}.json")
        ar = Trace.load(tmp_path / "t" / f"{atlas_run.trace_name(r | {'spec': 'ar'})}.json")
        want = paired.compare(mine, ar, pixels(model, mine), pixels(model, ar))
        assert r["changed"] == want.count and r["first_changed"] == want.first
        assert r["mean_abs"] == pytest.approx(want.mean_abs, abs=1e-12)
    assert result["paired"]["sjd"]["changed"] == 0 and out.with_name("k_paired.png").exists()
    assert atlas_paired.markdown(result) in capsys.readouterr().out
