"""Every method on a converted LlamaGen directory from the served app: the tiny target and draft GPT are
found under $SPECVIZ_MODELS (so they are allow-listed without --allow-paths), offered as model and Drafter, and driven
through gradio_client by parameter name."""
from __future__ import annotations

import pytest
import torch
from gradio_client import Client

import app
from specviz.app.catalogue import available_models, default_catalogue
from specviz.app.handlers import GEN_OUTPUTS
from specviz.engine.registry import METHODS
from tests.support.apptools import module_gradio_tmp  # noqa: F401 (fixture)
from tests.support.llamagen_tiny import converted_pair

SMALL = dict(window=4, tree_depth=3, tree_topk=2, tau_pos=0.5, tau_seq=0.5, pac_width=2, pac_depth=2)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("models")
    target, draft = converted_pair(root)
    mp = pytest.MonkeyPatch()
    mp.setenv("SPECVIZ_MODELS", str(root))
    backend = default_catalogue("cpu")
    assert {target, draft} <= set(available_models()) and {target, draft} <= set(backend.drafters)
    demo = app.build_demo(backend, fps=1000, export_root=str(tmp_path_factory.mktemp("exports")))
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True)
    client = Client(url, verbose=False)
    yield client, target, draft
    client.close()
    demo.close()
    mp.undo()


@pytest.mark.slow
def test_every_method_on_llamagen_with_a_draft_model(served):
    client, target, draft = served
    result = client.predict(prompt="a red house", model=target, methods=list(METHODS), draft_model=draft,
                            api_name="/generate", **SMALL)
    rows = {r[0]: r for r in result[GEN_OUTPUTS.index("summary")]["data"]}
    assert list(rows) == list(METHODS)
    for m in ("sd", "cascade", "lantern"):
        stats = result[GEN_OUTPUTS.index(f"stats_{m}")]
        assert "drafter: draft model" in stats and draft in stats, m


def test_app_main_allow_lists_converted_directories(served, monkeypatch):
    _, target, _ = served
    monkeypatch.setenv("SPECVIZ_MODELS", "/nonexistent")
    with pytest.raises(SystemExit, match="not allow-listed"):
        app.main(["--model", target, "--device", "cpu"])
