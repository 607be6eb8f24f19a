"""Every method on a Lumina-mGPT backend from the served app: a tiny random checkpoint in the released
layout (tests/support/lumina_tiny.py) typed in under --allow-paths, a draft model of the same family as the Drafter,
driven
through gradio_client by parameter name; the 4x6 raster comes back as images and maps."""
from __future__ import annotations

import pytest

from specviz.app.handlers import GEN_OUTPUTS
from specviz.engine.registry import METHODS
from tests.support.apptools import module_gradio_tmp, serve_checkpoints  # noqa: F401 (fixture)
from tests.support.lumina_tiny import make_tiny_lumina

SMALL = dict(window=6, tree_depth=3, tree_topk=2, tau_pos=0.5, tau_seq=0.5, pac_width=2, pac_depth=2)


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    root = tmp_path_factory.mktemp("lumina-app")
    return str(make_tiny_lumina(root / "target", seed=0)), str(make_tiny_lumina(root / "draft", seed=1))


@pytest.fixture(scope="module")
def served(paths, tmp_path_factory):
    yield from serve_checkpoints(*paths, str(tmp_path_factory.mktemp("exports")))


@pytest.mark.slow
def test_every_method_on_lumina_with_a_draft_model(served, paths):
    from PIL import Image
    result = served.predict(prompt="a red house", model=paths[0], methods=list(METHODS), draft_model=paths[1],
                            api_name="/generate", **SMALL)
    rows = {r[0]: r for r in result[GEN_OUTPUTS.index("summary")]["data"]}
    assert list(rows) == list(METHODS)
    for m in ("sd", "cascade", "lantern"):
        stats = result[GEN_OUTPUTS.index(f"stats_{m}")]
        assert "drafter: draft model" in stats and paths[1] in stats, m
    for m in METHODS:
        with Image.open(result[GEN_OUTPUTS.index(f"img_{m}")]) as im:
            w, h = im.size
            assert w * 4 == h * 6, (m, im.size)                     # the 4 x 6 raster, upscaled
    with Image.open(result[GEN_OUTPUTS.index("map_decision")]) as im:
        assert im.size[0] > 0
