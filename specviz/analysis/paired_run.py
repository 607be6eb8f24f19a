"""A run against AR's run of the same image under the same keyed noise (docs/methods.md §9), for the measuring loops
(the bench, the sweep, the atlas): AR is decoded once per image and remembered, its tokens and image compared with
the run's by analysis/paired.py. In the papers' mode nothing is compared."""
from __future__ import annotations

import json
import weakref
from dataclasses import replace

import numpy as np
import torch

from specviz.analysis import paired
from specviz.core.trace import Trace
from specviz.engine.config import RunConfig
from specviz.models.runner import run

_AR = weakref.WeakKeyDictionary()   # model -> {AR's keyed config: [AR's trace, its image or None]}: one AR run per
#                                   image across methods and sweep points, forgotten with the model


def _shared(cfg: RunConfig) -> str:
    return json.dumps({k: getattr(cfg, k) for k in paired.SHARED}, sort_keys=True)


def reference(model, cfg: RunConfig, trace: Trace | None = None) -> Trace:
    """AR's keyed trace for cfg's image (prompt, seed, model and sampling knobs): `trace` itself when cfg is AR's,
    else a remembered one, else decoded now. What is remembered is its method, config, grid and tokens, not its
    steps (a long keyed bench keeps one per image)."""
    runs, key = _AR.setdefault(model, {}), _shared(cfg)
    if cfg.method == "ar" and trace is not None:
        runs[key] = [_light(trace), None]
    if key not in runs:
        ar = run(RunConfig(**{k: getattr(cfg, k) for k in paired.SHARED}, method="ar"), model=model)
        runs[key] = [_light(ar), None]
    return runs[key][0]


def _light(trace: Trace) -> Trace:
    return replace(trace, tokens=list(trace.tokens), steps=[], summary={})


def reference_image(model, cfg: RunConfig) -> np.ndarray:
    """AR's decoded image for cfg's image (decoded once; `reference` first)."""
    entry = _AR[model][_shared(cfg)]
    if entry[1] is None:
        entry[1] = image(model, entry[0].tokens)
    return entry[1]


def image(model, tokens) -> np.ndarray:
    """The decoded image of `tokens` as a uint8 RGB array."""
    return np.asarray(model.decode_image(torch.tensor(tokens)).convert("RGB"))


def pixels(model, cfg: RunConfig, tokens) -> tuple[float, float]:
    """(PSNR in dB, inf when equal; mean |pixel difference|) of the image of `tokens` (a run decoded with cfg)
    against AR's image of the same prompt and seed under keyed noise (AR decoded once; ValueError in the papers'
    mode)."""
    if cfg.noise != "keyed":
        raise ValueError("pixels against AR need keyed noise (the papers' mode shares no draws with AR)")
    reference(model, cfg)
    return paired.pixel_diff(image(model, tokens), reference_image(model, cfg))


def against_ar(model, cfg: RunConfig, trace: Trace, run_image: np.ndarray | None = None) -> paired.Paired | None:
    """The paired measures of `trace` (decoded with cfg) against AR's trace of the same image; the pixel measures
    too when `run_image` (the run's decoded image) is given. None in the papers' mode."""
    if cfg.noise != "keyed":
        return None
    ar = reference(model, cfg, trace)
    ar_image = None if run_image is None else reference_image(model, cfg)
    return paired.compare(trace, ar, run_image, ar_image)
