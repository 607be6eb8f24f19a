"""A keyed atlas over Ray (docs/atlas.md, "Same image as AR"): on 2 local Ray workers, one task per image holding
all its method specs with AR's first, so AR is decoded once per image and model and each task pairs the image's runs
with it; the rows (paired measures included) equal the local run's."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from specviz.analysis import atlas, atlas_paired, atlas_run, paired_run

HAVE_MODEL = (Path(__file__).resolve().parents[2] / "assets" / "target.safetensors").exists()
SPECS = ["csd", "ar", "sjd"]                          # AR not first: the grouping puts it first within each image


def strip(rows) -> list[str]:
    return sorted(json.dumps({k: v for k, v in r.items() if k != "seconds"}, sort_keys=True) for r in rows)


def test_jobs_go_by_image_with_ar_first():
    todo = atlas_run.jobs(SPECS + ["csd:lam=1"], 2, 2, "keyed")
    groups = atlas_run.by_image(todo)
    assert len(groups) == 4 and sorted(j for g in groups for j in map(json.dumps, g)) == sorted(map(json.dumps, todo))
    for g in groups:
        assert len({(j["prompt"], j["seed"]) for j in g}) == 1
        assert [j["spec"] for j in g] == ["ar", "csd", "sjd", "csd:lam=1"]


def test_one_image_task_decodes_ar_once(monkeypatch):
    """An image's task runs AR's job first and pairs the other keyed runs with that run: no second AR decode."""
    from tests.support.toy import toy
    model, factory = toy(codes=5, grid=3, sharpen=0.5)
    extra = []
    real = paired_run.run
    monkeypatch.setattr(paired_run, "run", lambda *a, **kw: extra.append(1) or real(*a, **kw))
    monkeypatch.setattr(atlas_run, "_worker_model", lambda name: (model, factory, None))
    group = atlas_run.by_image(atlas_run.jobs(SPECS, 1, 1, "keyed"))[0]
    rows = atlas_run._ray_image("toy", group)
    assert [r["spec"] for r in rows] == ["ar", "csd", "sjd"] and extra == []
    assert rows[0]["changed"] == rows[2]["changed"] == 0


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_MODEL, reason="assets/target.safetensors not trained yet")
def test_keyed_atlas_on_two_ray_workers_gives_the_local_rows(tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")
    from specviz.engine.drafters import drafter_factory
    from specviz.models import load_model
    todo = atlas_run.jobs(SPECS, 2, 1, "keyed")
    tasks = []
    real_map = atlas_run.ray_map
    monkeypatch.setattr(atlas_run, "ray_map", lambda addr, fn, items: real_map(addr, fn, tasks.extend(items) or tasks))
    ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)                  # 2 workers
    try:
        remote, new = atlas_run.collect(todo, tmp_path / "ray.jsonl", None, ray="auto")
    finally:
        ray.shutdown()
    assert new == 6 and [[j["spec"] for j in t] for t in tasks] == [["ar", "csd", "sjd"]] * 2   # a task per image
    model = load_model("scenes")
    local, _ = atlas_run.collect(todo, tmp_path / "local.jsonl", lambda: (model, drafter_factory(model)))
    assert strip(remote) == strip(local)
    assert all(set(atlas_paired.ROW_KEYS) <= set(r) and r["noise"] == "keyed" for r in remote)
    assert all(r["changed"] == 0 for r in remote if r["spec"] in ("ar", "sjd"))
    assert any(r["changed"] > 0 for r in remote if r["spec"] == "csd")
    assert atlas.aggregate(remote)["paired"] == atlas.aggregate(local)["paired"]
