"""Resolve a RunConfig into a model + drafter and stream the run (used by the CLI, the bench and the app)."""
from __future__ import annotations

from typing import Iterator

from specviz.config import TREE_METHODS, ConfigError, RunConfig
from specviz.decode import Progress, decode, drain
from specviz.models import drafter_factory, load_model
from specviz.trace import Trace


def stream(cfg: RunConfig, device: str = "auto", draft_model=None, record: bool = True,
           model=None) -> Iterator[Progress]:
    model = model if model is not None else load_model(cfg.model, device)
    factory = drafter_factory(model, draft_model)
    if cfg.method in TREE_METHODS and factory is None:
        raise ConfigError(f"--method {cfg.method} needs a tree drafter: the scenes model ships one; for other "
                          "models pass --draft-model")
    return decode(model, cfg, factory, record=record)


def run(cfg: RunConfig, **kw) -> Trace:
    return drain(stream(cfg, **kw)).trace
