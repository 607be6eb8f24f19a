"""specviz: a visual laboratory for speculative decoding of autoregressive image generators.

The package's rooms (docs/architecture.md): core (trace records and their JSON contract, knobs, sampling math),
engine (rules, verification, drafters, the method registry and catalogue, decode), models and scenes (the model
boundary and the embedded world), analysis (views, preview, bench, sweep, atlas), render (pictures and text) and app
(the Gradio side). The names below are the public API, loaded on first use, so that `import specviz` and reading a
trace file (specviz.core.trace) load neither torch nor the engine.
"""
from __future__ import annotations

import importlib

_API = {
    "METHODS": "specviz.engine.config", "RunConfig": "specviz.engine.config", "ConfigError": "specviz.core.knobs",
    "Progress": "specviz.engine.decode", "decode": "specviz.engine.decode",
    "drafter_factory": "specviz.engine.drafters", "load_model": "specviz.models",
    "run": "specviz.models.runner", "stream": "specviz.models.runner",
    "DECISIONS": "specviz.core.trace", "TokenEvent": "specviz.core.trace", "StepEvent": "specviz.core.trace",
    "Trace": "specviz.core.trace",
}
__all__ = list(_API)


def __getattr__(name: str):
    """The public API on first use (PEP 562): importing the engine loads torch, which reading a trace must not."""
    if name not in _API:
        raise AttributeError(f"module 'specviz' has no attribute {name!r}")
    value = getattr(importlib.import_module(_API[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
