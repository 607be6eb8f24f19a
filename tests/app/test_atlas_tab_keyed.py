"""The Atlas tab's Noise choice (app/atlas_tab.py): keyed noise adds the paired table against AR, written from the
atlas JSON it offers for download, and the paired figures; the papers' noise shows and writes none of it."""
from __future__ import annotations

import json
from pathlib import Path

from specviz.analysis import atlas_paired
from specviz.app import atlas_tab
from tests.support.toy import toy


def build(tmp_path, noise):
    model, factory = toy(codes=5, grid=3, sharpen=0.5)
    return atlas_tab.run_atlas(lambda: (model, factory), ["ar", "csd"], 2, 1, str(tmp_path), noise=noise)


def test_keyed_noise_shows_the_paired_table_of_the_atlas_json(tmp_path):
    *_, files, table = build(tmp_path, "keyed")
    result = json.loads(Path(next(f for f in files if f.endswith("atlas.json"))).read_text())
    assert set(result["paired"]) == {"ar", "csd"} and table == atlas_paired.markdown(result)
    assert "| ar | 2 | 0.00 ± 0.00 | 1.00 |" in table                      # AR against itself: nothing changed
    assert any(f.endswith("atlas_paired.png") for f in files)
    assert atlas_tab.NOISE.choices == ("papers", "keyed") and atlas_tab.NOISE.default == "papers"


def test_papers_noise_shows_no_paired_table(tmp_path):
    *_, files, table = build(tmp_path, "papers")
    assert table == "" and not any("paired" in f for f in files)
    assert "paired" not in json.loads(Path(next(f for f in files if f.endswith("atlas.json"))).read_text())


def test_the_tab_offers_the_noise_choice_and_sends_it():
    import app  # the app module builds the whole Blocks: only this test needs it
    from tests.support.apptools import tiny_backend  # a tiny injected backend, as the app's own tests use
    cfg = app.build_demo(tiny_backend()[0]).get_config_file()
    by_id = {c["id"]: c["props"] for c in cfg["components"]}
    noise = next(p for p in by_id.values() if p.get("elem_id") == "at_noise")
    assert [c[0] for c in noise["choices"]] == ["papers", "keyed"] and noise["value"] == "papers"
    ids = {p.get("elem_id"): i for i, p in by_id.items()}
    go = next(d for d in cfg["dependencies"] if ids["at_go"] in [t[0] for t in d["targets"]])
    assert go["inputs"][-1] == ids["at_noise"] and go["outputs"][-1] == ids["at_paired"]
