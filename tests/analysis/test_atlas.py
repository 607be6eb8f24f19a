"""The acceleration atlas: every number of the atlas JSON (maps, bins, edges, headline) is recomputed here directly
from the saved traces (and the images decoded from their tokens, and the region head on those images), with plain
loops; the figures draw exactly those numbers; the JSONL is resumable; Ray and local runs agree."""
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from specviz.analysis import atlas, atlas_run
from specviz.core.detail import DETAIL_EDGES
from specviz.core.trace import Trace
from specviz.render import atlas_fig
from tests.support.toy import grp, toy

HAVE_MODEL = (Path(__file__).resolve().parents[2] / "assets" / "target.safetensors").exists()
HAVE_HEAD = (Path(__file__).resolve().parents[2] / "assets" / "regions.safetensors").exists()
METHODS = ["ar", "sjd", "csd", "cascade"]


class Textured:
    """A tiny model whose decoded cells have token-dependent texture (so every detail bin can fill)."""

    def __init__(self, model):
        self.inner = model

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def decode_image(self, tokens):
        gh, gw = self.inner.grid
        t = np.asarray(tokens).reshape(gh, gw)
        base = np.kron(t * 20 + 40, np.ones((4, 4)))
        checker = np.kron(np.ones((gh, gw)), np.indices((4, 4)).sum(0) % 2 * 2 - 1)
        amp = np.kron(t % 4 * 3, np.ones((4, 4)))                        # pixel std 0, 3, 6, 9 per cell
        img = np.clip(base + amp * checker, 0, 255).astype(np.uint8)
        return Image.fromarray(np.stack([img, img[::-1], img.T], -1))


# ------------------------------------------------------------------------------------------- direct recomputation
def per_position(trace: Trace, image: np.ndarray, regions) -> list[dict]:
    """Every position's numbers straight from the trace's events and the decoded image."""
    gh, gw = trace.grid
    ph, pw = image.shape[0] // gh, image.shape[1] // gw
    out = []
    for pos in range(gh * gw):
        evs = [(st.step, ev) for st in trace.steps for ev in st.events if ev.pos == pos]
        step, com = [(s, e) for s, e in evs if e.decision in ("exact", "relaxed", "resampled", "bonus", "ar")][0]
        judged = [e for _, e in evs if e.decision in ("exact", "relaxed", "rejected")]
        g = grp(judged[-1]) if judged else None
        group = -1 if g is None else (1 if g.interchangeable else 0) + (2 if g.convergent else 0)
        i, j = divmod(pos, gw)
        patch = image[i * ph:(i + 1) * ph, j * pw:(j + 1) * pw].astype(float)
        out.append({"fin": step / max(1, len(trace.steps) - 1), "dec": com.decision, "h": com.entropy,
                    "cost": com.tv_cost, "rej": sum(e.decision == "rejected" for _, e in evs),
                    "grouped": group > 0, "detail": np.mean([np.std(patch[..., c]) for c in range(3)]),
                    "region": None if regions is None else int(regions[i, j])})
    return out


def expected_atlas(runs: dict) -> dict:
    """runs: method -> list of (per_position list, forwards, grid). The atlas, recomputed with loops."""
    pooled = [p["h"] for rs in runs.values() for r, _, _ in rs for p in r]
    edges = list(np.percentile(pooled, [10, 20, 30, 40, 50, 60, 70, 80, 90]))
    dec_bin = lambda p: sum(p["h"] >= e for e in edges)                              # noqa: E731
    det_bin = lambda p: sum(p["detail"] >= e for e in DETAIL_EDGES)                  # noqa: E731
    with_regions = all(p["region"] is not None for rs in runs.values() for r, _, _ in rs for p in r)
    out = {"entropy_edges": edges, "maps": {}, "binned": {}, "headline": {}}
    for m, rs in runs.items():
        gh, gw = rs[0][2]
        cells = lambda f: [[float(np.mean([f(r[i * gw + j]) for r, _, _ in rs])) for j in range(gw)]  # noqa: E731
                           for i in range(gh)]
        out["maps"][m] = {"finalize": cells(lambda p: p["fin"]), "exact": cells(lambda p: p["dec"] == "exact"),
                          "relaxed": cells(lambda p: p["dec"] == "relaxed"),
                          "resampled": cells(lambda p: p["dec"] == "resampled"),
                          "tv_cost": cells(lambda p: p["cost"])}
        ps = [p for r, _, _ in rs for p in r]
        kinds = {"entropy": (dec_bin, 10), "detail": (det_bin, 3)} | (
            {"region": (lambda p: p["region"], 3)} if with_regions else {})
        out["binned"][m] = {}
        for kind, (f, n) in kinds.items():
            b = {"count": [], "acceptance": [], "relaxation": [], "tv_cost": []}
            for k in range(n):
                sel = [p for p in ps if f(p) == k]
                b["count"].append(len(sel))
                mean = lambda g: float(np.mean([g(p) for p in sel])) if sel else None    # noqa: E731
                b["acceptance"].append(mean(lambda p: p["dec"] in ("exact", "relaxed")))
                b["relaxation"].append(mean(lambda p: p["dec"] == "relaxed"))
                b["tv_cost"].append(mean(lambda p: p["cost"]))
            out["binned"][m][kind] = b
        out["headline"][m] = headline(ps, len(rs), [fw for _, fw, _ in rs], dec_bin, det_bin, with_regions)
    return out


def headline(ps, images, forwards, dec_bin, det_bin, with_regions) -> dict:
    def pct(sel, among=lambda p: True, weight=lambda p: 1):
        den = sum(weight(p) for p in ps if among(p))
        return None if den == 0 else 100 * sum(weight(p) for p in ps if among(p) and sel(p)) / den
    rel, low = (lambda p: p["dec"] == "relaxed"), (lambda p: det_bin(p) == 0)
    obj, grp = (lambda p: p["region"] == 2), (lambda p: p["grouped"])
    h = {"images": images, "forwards": float(np.mean(forwards)),
         "accepted_pct": pct(lambda p: p["dec"] in ("exact", "relaxed")), "relaxed_pct": pct(rel),
         "relaxed_low_detail_pct": pct(low, rel), "low_detail_pct": pct(low),
         "relaxed_uncertain_pct": pct(lambda p: dec_bin(p) >= 5, rel), "uncertain_pct": pct(lambda p: dec_bin(p) >= 5),
         "tv_cost_low_detail_pct": pct(low, weight=lambda p: p["cost"])
         if sum(p["cost"] for p in ps) / len(ps) > 1e-6 else None,
         "rejected": sum(p["rej"] for p in ps), "grouped_pct": pct(grp), "grouped_low_detail_pct": pct(low, grp)}
    region = {"rejected_on_object_pct": pct(obj, weight=lambda p: p["rej"]), "object_pct": pct(obj),
              "relaxed_on_object_pct": pct(obj, rel), "grouped_on_object_pct": pct(obj, grp)}
    return h | {k: v if with_regions else None for k, v in region.items()}


def assert_same(got, want, where="atlas"):
    """Same structure and numbers (floats to 1e-9); None only where None is expected."""
    if isinstance(want, dict):
        assert set(got) == set(want), f"{where}: keys {sorted(set(got) ^ set(want))} differ"
        for k in want:
            assert_same(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert len(got) == len(want), f"{where}: length {len(got)} != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
    elif want is None:
        assert got is None, f"{where}: {got} where nothing was expected"
    else:
        assert got is not None and abs(got - want) <= 1e-9 * max(1.0, abs(want)), f"{where}: {got} != {want}"


def check_against_traces(result: dict, trace_dir: Path, model, head=None) -> None:
    """Group the saved traces by method spec (their file names start with the spec's slug) and compare."""
    from specviz.core.paths import slug
    spec_of = {slug(m, 24): m for m in result["methods"]}
    runs: dict = {}
    for path in sorted(trace_dir.glob("*.json")):
        t = Trace.load(path)
        image = np.asarray(model.decode_image(torch.tensor(t.tokens)).convert("RGB"))
        regions = None
        if head is not None:
            from specviz.scenes.regions import predict
            regions = predict(head, image[None])[0]
        runs.setdefault(spec_of[path.name.split("_")[0]], []).append((per_position(t, image, regions),
                                                                      len(t.steps), t.grid))
    want = expected_atlas({m: runs[m] for m in result["methods"]})
    assert_same({k: result[k] for k in want}, want)
    assert result["images"] == {m: len(rs) for m, rs in runs.items()}


def check_figures(result: dict) -> None:
    """The drawn data are the atlas's numbers (lines: entropy; bars: detail / region; images: maps)."""
    fig = atlas_fig.binned_figure(result)
    kinds = list(result["bins"])
    axes = np.array(fig.axes[:3 * len(kinds)]).reshape(3, len(kinds))
    for r, metric in enumerate(atlas.METRICS):
        for c, kind in enumerate(kinds):
            for i, m in enumerate(result["methods"]):
                want = np.array([np.nan if v is None else v for v in result["binned"][m][kind][metric]], float)
                drawn = axes[r, c].lines[i].get_ydata() if kind == "entropy" else \
                    [b.get_height() for b in axes[r, c].containers[i]]
                np.testing.assert_array_equal(np.asarray(drawn, float), want)
    maps = atlas_fig.maps_figure(result)
    for i, m in enumerate(result["methods"]):
        for c, k in enumerate(atlas.MAP_KEYS):
            drawn = maps.axes[i * len(atlas.MAP_KEYS) + c].images[0].get_array()
            np.testing.assert_array_equal(np.asarray(drawn), np.array(result["maps"][m][k]))


# ------------------------------------------------------------------------------------------------------ tests
@pytest.mark.slow
def test_atlas_numbers_from_saved_traces_tiny(tmp_path):
    model, factory = toy(codes=8, grid=4)
    model = Textured(model)
    specs = METHODS + ["csd:lam=2,delta=0.95"]
    todo = atlas_run.jobs(specs, 3, 2)
    seen = []
    (tmp_path / "t").mkdir()
    rows, new = atlas_run.collect(todo, tmp_path / "a.jsonl", lambda: (model, factory), trace_dir=tmp_path / "t",
                                  progress=lambda d, t: seen.append((d, t)))
    assert new == len(todo) == len(rows) == 30 and seen[-1] == (30, 30)
    result = atlas.aggregate(rows)
    assert result["methods"] == specs                               # a spec is its own atlas entry
    assert {Trace.load(p).config["lam"] for p in (tmp_path / "t").glob("csd-lam*.json")} == {2.0}
    check_against_traces(result, tmp_path / "t", model)
    assert all(c > 0 for c in result["binned"]["sjd"]["detail"]["count"])       # the texture fills every bin
    assert sum(result["binned"]["csd"]["entropy"]["count"]) == 3 * 2 * 16
    check_figures(result)
    again, new = atlas_run.collect(todo, tmp_path / "a.jsonl", lambda: pytest.fail("nothing left to run"))
    assert new == 0 and again == rows                                               # resumable: nothing re-run
    paths, _ = atlas_fig.export(result, tmp_path / "a")
    assert sorted(p.suffix for p in paths) == [".json", ".pdf", ".pdf", ".png", ".png"]
    assert json.loads((tmp_path / "a.json").read_text())["headline"] == result["headline"]


@pytest.mark.slow
@pytest.mark.skipif(not (HAVE_MODEL and HAVE_HEAD), reason="assets/target.safetensors or regions not trained")
def test_atlas_cli_on_scenes_every_number(tmp_path):
    from specviz.__main__ import main
    from specviz.models import load_model
    from specviz.scenes.regions import load_head
    out = tmp_path / "new" / "s.jsonl"                        # a folder that does not exist yet
    assert main(["atlas", "--methods", *METHODS, "--prompts", "2", "--seeds", "1", "--out", str(out),
                 "--traces", str(tmp_path / "t")]) == 0
    result = json.loads(out.with_suffix(".json").read_text())
    assert list(result["bins"]) == ["entropy", "detail", "region"] and result["run"]["new_runs"] == 8
    check_against_traces(result, tmp_path / "t", load_model("scenes"), load_head())
    check_figures(result)
    assert all(out.with_name(n).exists() for n in ("s.png", "s.pdf", "s_maps.png", "s_maps.pdf"))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_MODEL, reason="assets/target.safetensors not trained yet")
def test_atlas_ray_and_local_rows_agree(tmp_path):
    pytest.importorskip("ray")
    from specviz.engine.drafters import drafter_factory
    from specviz.models import load_model
    todo = atlas_run.jobs(["ar", "csd", "cascade"], 1, 1)
    remote, new = atlas_run.collect(todo, tmp_path / "ray.jsonl", None, ray="auto")
    import ray
    ray.shutdown()
    model = load_model("scenes")
    local, _ = atlas_run.collect(todo, tmp_path / "local.jsonl", lambda: (model, drafter_factory(model)))
    strip = lambda rows: sorted(json.dumps({k: v for k, v in r.items() if k != "seconds"}, sort_keys=True)  # noqa
                                for r in rows)
    assert new == 3 and strip(remote) == strip(local)
