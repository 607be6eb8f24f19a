"""Opening saved traces: trace JSON files (from the CLI, an export or anyone) checked against their records, one per
method, re-summarised, and decoded to images when the trace's model is offered here."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from specviz.app.catalogue import Catalogue, load
from specviz.core.knobs import ConfigError
from specviz.core.trace import Trace
from specviz.engine.registry import METHODS
from specviz.engine.summary import summarize
from specviz.engine.validate import read_trace


def read_traces(catalogue: Catalogue, paths) -> tuple[dict, dict, str]:
    """Trace JSON files (from the CLI, an export or anyone) -> (method -> checked Trace, method -> image, note).
    Images are decoded only when the trace's model is offered here and fits; the maps need no model."""
    paths = [p for p in (paths or []) if p]
    if not paths:
        raise ConfigError("choose one or more trace JSON files (Export writes them; so does `specviz generate`)")
    if len(paths) > len(METHODS):
        raise ConfigError(f"open at most {len(METHODS)} traces at once (one per method), got {len(paths)}")
    traces: dict[str, Trace] = {}
    for p in paths:
        name = Path(str(p)).name
        try:
            t = read_trace(p)
        except (ValueError, OSError) as e:
            raise ConfigError(f"{name}: {e}") from None
        if t.method in traces:
            raise ConfigError(f"{name}: a second trace for {t.method}; open one trace per method")
        grids = {tuple(o.grid) for o in traces.values()}
        if grids and tuple(t.grid) not in grids:
            raise ConfigError(f"{name}: grid {t.grid} differs from the other traces' {list(grids.pop())}")
        summarize(t, sum(s.seconds for s in t.steps))          # never trust a file's own summary
        traces[t.method] = t
    traces = {m: traces[m] for m in METHODS if m in traces}
    return traces, *_decode_all(catalogue, traces)


def _decode_all(catalogue: Catalogue, traces: dict) -> tuple[dict, str]:
    names = {t.model for t in traces.values()}
    name = next(iter(names))
    if len(names) > 1 or name not in catalogue.models:
        return {}, f"images not decoded: {', '.join(sorted(names))} is not offered here (the maps need no model)"
    model, _ = load(catalogue, name)
    images = {}
    for m, t in traces.items():
        fits = list(model.grid) == t.grid and len(t.tokens) == t.grid[0] * t.grid[1]
        if fits and max(t.tokens) < model.codebook_size:
            images[m] = np.asarray(model.decode_image(torch.tensor(t.tokens)).convert("RGB"))
    missing = sorted(set(traces) - set(images))
    return images, (f"decoded with {name}" + (f"; no image for {', '.join(missing)} (tokens do not fit the model)"
                                              if missing else ""))
