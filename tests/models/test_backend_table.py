"""The backend table (specviz/models BACKENDS: probe -> loader): each kind of name reaches its own backend, in the
table's order, load_model and the model list read the table, and nothing of a backend loads before it is asked for."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from specviz import models


def _dir(tmp_path, name, config):
    d = tmp_path / name
    d.mkdir()
    (d / "config.json").write_text(json.dumps(config))
    return str(d)


def test_each_name_reaches_its_backend(tmp_path):
    assert [b.name for b in models.BACKENDS] == ["scenes", "llamagen", "lumina", "janus"]
    assert models.backend_for("scenes").name == "scenes"
    assert models.backend_for(_dir(tmp_path, "lg", {"family": "llamagen"})).name == "llamagen"
    assert models.backend_for(_dir(tmp_path, "lu", {"model_type": "chameleon"})).name == "lumina"
    assert models.backend_for("Alpha-VLLM/Lumina-mGPT-7B-768").name == "lumina"        # refused clearly by its loader
    assert models.backend_for("deepseek-community/Janus-Pro-1B").name == "janus"
    assert models.backend_for(_dir(tmp_path, "other", {"model_type": "llama"})).name == "janus"


def test_load_model_and_the_model_list_read_the_table(tmp_path, monkeypatch):
    seen = []
    fake = models.Backend(name="fake", probe=lambda name: name.startswith("fake:"),
                          load=lambda name, device: seen.append((name, device)) or "model", directory=True)
    monkeypatch.setattr(models, "BACKENDS", (fake, *models.BACKENDS))
    models.load_model.cache_clear()
    try:
        assert models.load_model("fake:x", "cpu") == "model" and seen == [("fake:x", "cpu")]
    finally:
        models.load_model.cache_clear()
    monkeypatch.setenv("SPECVIZ_MODELS", str(tmp_path))
    lg = _dir(tmp_path, "lg", {"family": "llamagen"})
    _dir(tmp_path, "plain", {"model_type": "llama"})
    assert models.converted_models() == (lg,)


@pytest.mark.parametrize("code", ["import specviz.models",
                                  "import specviz.models; specviz.models.backend_for('scenes')"])
def test_no_backend_loads_before_it_is_asked_for(code):
    out = subprocess.run([sys.executable, "-c", code + "; import sys; print(sorted(m for m in ('torch', 'transformers',"
                          " 'specviz.models.janus', 'specviz.models.llamagen') if m in sys.modules))"],
                         capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "[]"


def test_a_backend_says_whether_its_models_draft_for_themselves(tmp_path):
    """The app's default draft model asks the row (models.offers_own_drafter), not the name: only scenes drafts its
    own trees — and the loaded scenes model does offer its EAGLE head (the engine's capability)."""
    from specviz.engine.drafters.protocols import OffersEagleHead  # the capability the row declares
    assert [b.name for b in models.BACKENDS if b.own_drafter] == ["scenes"]
    assert [b.name for b in models.BACKENDS if b.embedded] == ["scenes"] and models.is_embedded("scenes")
    assert not models.is_embedded("deepseek-community/Janus-Pro-1B") and not models.is_embedded("")
    assert models.offers_own_drafter("scenes")
    assert not models.offers_own_drafter("deepseek-community/Janus-Pro-1B")
    assert not models.offers_own_drafter(_dir(tmp_path, "lg", {"family": "llamagen"}))
    scenes = models.load_model("scenes", "cpu")
    assert isinstance(scenes, OffersEagleHead) and scenes.eagle_head() is not None
