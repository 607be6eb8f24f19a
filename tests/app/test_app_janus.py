"""Every method on a Janus backend from the served app: tiny random Janus target + draft checkpoints,
loaded through the app's own path rules (--allow-paths, a Drafter), driven through gradio_client by parameter
name; CASCADE's hidden-state groups on Janus."""
from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from specviz.app.catalogue import Catalogue, default_catalogue
from specviz.app.handlers import GEN_INPUTS, GEN_OUTPUTS, Handlers
from specviz.core.trace import Trace
from specviz.engine.config import RunConfig
from specviz.engine.registry import METHODS
from specviz.models import load_model
from specviz.models.runner import run
from tests.support.apptools import module_gradio_tmp, serve_checkpoints  # noqa: F401 (fixture)
from tests.support.janus_tiny import tiny_pair

SMALL = dict(window=4, tree_depth=3, tree_topk=2, tau_pos=0.5, tau_seq=0.5, pac_width=2, pac_depth=2)


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return tiny_pair(tmp_path_factory.mktemp("janus-app"))


@pytest.fixture(scope="module")
def served(paths, tmp_path_factory):
    yield from serve_checkpoints(*paths, str(tmp_path_factory.mktemp("exports")))


def _rows(result) -> dict:
    return {r[0]: r for r in result[GEN_OUTPUTS.index("summary")]["data"]}


@pytest.mark.slow
def test_api_parameters_have_names(served):
    info = served.view_api(return_format="dict", print_info=False)["named_endpoints"]["/generate"]
    assert [p["parameter_name"] for p in info["parameters"]] == [*GEN_INPUTS, "opacity"]
    assert {p["parameter_name"] for p in info["parameters"]} >= {"prompt", "seed", "lam", "delta", "tau_pos",
                                                                 "tau_seq", "draft_model"}
    files = served.view_api(return_format="dict", print_info=False)["named_endpoints"]["/open_traces"]
    assert [p["parameter_name"] for p in files["parameters"]] == ["files", "opacity"]


def test_every_method_on_janus_with_a_draft_model(served, paths):
    result = served.predict(prompt="a red house", model=paths[0], methods=list(METHODS), draft_model=paths[1],
                            api_name="/generate", **SMALL)
    rows = _rows(result)
    assert list(rows) == list(METHODS)
    for m in ("sd", "cascade", "lantern"):
        stats = result[GEN_OUTPUTS.index(f"stats_{m}")]
        assert "drafter: draft model" in stats and paths[1] in stats, m


def test_lambda_by_name_matches_the_engine(served, paths):
    result = served.predict(prompt="a red house", model=paths[0], methods=["csd"], lam=2.0, seed=4,
                            api_name="/generate")
    row = _rows(result)["csd"]
    want = run(RunConfig(method="csd", model=paths[0], prompt="a red house", lam=2.0, seed=4), device="cpu")
    assert row[1] == want.summary["target_forwards"] and row[4] == want.summary["relaxed"]


def test_the_one_offered_draft_model_is_the_default_drafter(served, paths):
    """Served with one --draft-model, a Janus target runs sd and cascade without naming draft_model, and
    each trace's config names the drafter that ran (none for a method that drafts no tree)."""
    result = served.predict(prompt="a red house", model=paths[0], methods=["sd", "cascade"], api_name="/generate",
                            **SMALL)
    assert list(_rows(result)) == ["sd", "cascade"]
    for m in ("sd", "cascade"):
        assert paths[1] in result[GEN_OUTPUTS.index(f"stats_{m}")], m
    base = default_catalogue("cpu", allow_paths=True, drafters=(paths[1],))
    h = Handlers(Catalogue(base.load, (paths[0],), (), True, base.drafters))
    args = {**asdict(RunConfig()), **SMALL, "prompt": "a red house", "model": paths[0], "methods": ["ar", "sd"]}
    final = list(h.generate({k: args[k] for k in GEN_INPUTS} | {"opacity": 1.0}))[-1]
    traces = final["state"].traces
    assert traces["sd"].config["draft_model"] == paths[1] and traces["ar"].config["draft_model"] == ""


def test_tree_methods_without_a_drafter_name_the_app_option(paths):
    """No draft model offered (or two: the caller must choose): the error names the Drafter option."""
    import gradio as gr
    base = default_catalogue("cpu", allow_paths=True)
    args = {**asdict(RunConfig()), **SMALL, "prompt": "a red house", "model": paths[0], "methods": ["cascade"]}
    for drafters in [(), (paths[1], paths[0])]:
        h = Handlers(Catalogue(base.load, (paths[0],), (), True, drafters))
        with pytest.raises(gr.Error, match="Drafter"):
            list(h.generate({k: args[k] for k in GEN_INPUTS} | {"opacity": 1.0}))


def test_cascade_groups_on_janus(paths, tmp_path):
    """CASCADE's groups come from the Janus target's hidden states exactly as on scenes: they appear, and every
    trace passes the checks."""
    target, draft = load_model(paths[0], "cpu"), load_model(paths[1], "cpu")
    grouped = 0
    for seed in range(3):
        t = run(RunConfig(method="cascade", model=paths[0], prompt="a red house", seed=seed, **SMALL | dict(
            tau_pos=0.0, tau_seq=0.0, tree_topk=4)), model=target, draft_model=draft)
        Trace.from_json(json.loads(json.dumps(t.to_json())))
        grouped += sum(ev.groups is not None and bool(ev.groups.interchangeable or ev.groups.convergent)
                       for _, ev in t.events())
    assert grouped > 0
