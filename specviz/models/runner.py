"""Resolve a RunConfig into a model + drafter and stream the run (the CLI, the bench, the atlas; the library's
`specviz.runner` is this module's public path). It loads models, so it lives with them: the engine below never
reaches up to specviz.models."""
from __future__ import annotations

from typing import Iterator

from specviz.core.trace import Trace
from specviz.engine.config import RunConfig
from specviz.engine.decode import Progress, decode, drain
from specviz.engine.drafters import drafter_factory
from specviz.models import load_model


def stream(cfg: RunConfig, device: str = "auto", draft_model=None, record: bool = True,
           model=None) -> Iterator[Progress]:
    model = model if model is not None else load_model(cfg.model, device)
    if draft_model is None and cfg.draft_model:
        draft_model = load_model(cfg.draft_model, device)
    return decode(model, cfg, drafter_factory(model, draft_model), record=record)


def run(cfg: RunConfig, **kw) -> Trace:
    return drain(stream(cfg, **kw)).trace
