"""Keyed noise on the real backends' tiny fixtures: tiny Janus (with a draft model), tiny LlamaGen (with a
smaller draft GPT) and tiny Lumina-mGPT (with a second checkpoint drafting): for several prompt/seed pairs every
lossless method commits AR's keyed tokens and the decoded images are equal pixel for pixel; CSD at λ = 0 too. Four
pairs in the fast lane, the 24 of docs/methods.md §9 marked slow: on Janus by default, on LlamaGen and Lumina-mGPT
`extended` (README "Run the tests")."""
from __future__ import annotations

import numpy as np
import pytest
import torch

torch.set_num_threads(1)

from specviz.engine.config import RunConfig  # noqa: E402
from specviz.models import load_model  # noqa: E402
from specviz.models.runner import run  # noqa: E402
from tests.support import llamagen_tiny as lt  # noqa: E402
from tests.support.cases import first  # noqa: E402
from tests.support.janus_tiny import tiny_pair  # noqa: E402
from tests.support.lumina_tiny import make_tiny_lumina  # noqa: E402

SMALL = dict(window=6, tree_depth=3, tree_topk=2, pac_width=2, pac_depth=2)
METHODS = [dict(method="sjd"), dict(method="mcsjd"), dict(method="sjdpac"), dict(method="sd"),
           dict(method="sd", tree_sampling="sample"), dict(method="sd", tree="static"), dict(method="csd", lam=0.0)]
PAIRS = [("a red house", 0), ("a blue sky", 1), ("a green tree", 2), ("a red house", 3)]
CAPTIONS = ("a red house", "a blue sky", "a green tree", "a yellow sun over the sea", "two cats", "a dark forest")
PAIRS_24 = [(CAPTIONS[i % len(CAPTIONS)], i) for i in range(24)]           # 24 distinct seeds, six captions
REST_24 = [p for p in PAIRS_24 if p not in PAIRS]     # what the 24-pair test adds: PAIRS holds 3 of them already


def _janus(root):
    return tiny_pair(root)


def _llamagen(root):
    return lt.converted_pair(root)


def _lumina(root):
    return str(make_tiny_lumina(root / "target", seed=0)), str(make_tiny_lumina(root / "draft", seed=1))


BUILDERS = {"janus": _janus, "llamagen": _llamagen, "lumina": _lumina}


@pytest.fixture(scope="module", params=list(BUILDERS))
def backend(request, tmp_path_factory):
    target, draft = BUILDERS[request.param](tmp_path_factory.mktemp(request.param))
    return target, load_model(target, "cpu"), load_model(draft, "cpu")


def check_pairs(backend, pairs) -> None:
    path, model, draft = backend
    for prompt, seed in pairs:
        base = dict(model=path, prompt=prompt, seed=seed, noise="keyed", **SMALL)
        ar = run(RunConfig(method="ar", **base), model=model, draft_model=draft).tokens
        img = np.asarray(model.decode_image(ar))
        for kw in METHODS:
            t = run(RunConfig(**{**base, **kw}), model=model, draft_model=draft)
            assert t.tokens == ar, (prompt, seed, kw)
            assert np.array_equal(np.asarray(model.decode_image(t.tokens)), img)


def test_lossless_methods_paint_ars_keyed_image(backend):
    check_pairs(backend, PAIRS)


@pytest.mark.slow
@pytest.mark.parametrize("backend", first(list(BUILDERS), 1), indirect=True)   # LlamaGen, Lumina: `extended`
def test_lossless_methods_paint_ars_keyed_image_24_pairs(backend):
    """The 24 pairs: the 21 not in PAIRS here, the other 3 by test_lossless_methods_paint_ars_keyed_image (the same
    check on the same backend, run wherever this one is: by default on all three backends)."""
    assert len(set(PAIRS_24)) == 24 and len(REST_24) == 21 and set(PAIRS_24) <= set(REST_24) | set(PAIRS)
    check_pairs(backend, REST_24)
