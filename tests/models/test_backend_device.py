"""The real backends' tiny fixtures (Janus with a draft model, LlamaGen with a smaller draft GPT, Lumina-mGPT with a
second checkpoint drafting) decode with every tensor they hold on a pretend device (tests/support/fakedevice.py):
no operation, in the engine or in the backend itself (which must move the host tokens and positions it is given),
mixes the model's device with the host as CUDA refuses. docs/gpu.md "What runs where, checked without a GPU"."""
from __future__ import annotations

import pytest

from specviz.engine.config import RunConfig
from specviz.engine.drafters import drafter_factory
from specviz.models import load_model
from tests.engine.test_device_residency import drain, fresh_mode
from tests.models.test_keyed_backends import BUILDERS, SMALL
from tests.support.fakedevice import model_tensors

CASES = {"ar": {}, "sjd": {}, "csd": {}, "sd": {}, "sd-sampled": dict(tree_sampling="sample"), "cascade": {},
         "sjdpac": {}, "lantern": {}}


@pytest.fixture(scope="module", params=list(BUILDERS))
def backend(request, tmp_path_factory):
    target, draft = BUILDERS[request.param](tmp_path_factory.mktemp(request.param))
    return target, load_model(target, "cpu"), load_model(draft, "cpu")


@pytest.mark.parametrize("noise", ["papers", "keyed"])
def test_backends_keep_to_their_device(backend, noise):
    path, model, draft = backend
    for case, over in CASES.items():
        mode = fresh_mode()
        mode.mark(*model_tensors(model), *model_tensors(draft))
        model.device = draft.device = mode.device()
        cfg = RunConfig(method=case.split("-")[0], prompt="a red house", seed=0, noise=noise, model=path, **SMALL,
                        **over)
        found = drain(mode, model, cfg, drafter_factory(model, draft), 3)
        assert mode.on_device > 100 and found == [], (case, found[:5])
