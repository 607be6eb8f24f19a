"""Keyed noise on the shipped scenes model (docs/methods.md §9): on the bench's 24 prompts, seed = prompt index, every
lossless method (sjd, mcsjd, sjdpac, sd with the EAGLE head: dynamic, static, chain and sampled trees) commits AR's
keyed tokens exactly and its decoded image equals AR's pixel for pixel."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from specviz.analysis.bench import prompt_set
from specviz.engine.config import RunConfig
from specviz.engine.runner import run
from specviz.models import load_model

HAVE_MODEL = (Path(__file__).resolve().parents[2] / "assets" / "target.safetensors").exists()
LOSSLESS = [dict(method="sjd"), dict(method="mcsjd"), dict(method="sjdpac"), dict(method="sd"),
            dict(method="sd", tree="static"), dict(method="sd", tree="chain"),
            dict(method="sd", tree_sampling="sample")]


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_MODEL, reason="assets/target.safetensors not trained yet")
def test_lossless_methods_paint_ars_keyed_image_on_scenes_24_pairs():
    torch.set_num_threads(1)
    model = load_model("scenes", "cpu")
    pairs = [(caption, i) for i, (caption, _) in enumerate(prompt_set(24))]
    assert len(set(pairs)) == 24
    for prompt, seed in pairs:
        base = dict(model="scenes", prompt=prompt, seed=seed, noise="keyed")
        ar = run(RunConfig(method="ar", **base), model=model).tokens
        img = np.asarray(model.decode_image(torch.tensor(ar)))
        for kw in LOSSLESS:
            t = run(RunConfig(**{**base, **kw}), model=model)
            assert t.tokens == ar, (prompt, seed, kw)
            assert np.array_equal(np.asarray(model.decode_image(torch.tensor(t.tokens))), img), (prompt, seed, kw)
