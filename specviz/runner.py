"""The README's library import path (`from specviz.runner import stream, run`); the runner lives in the engine."""
from specviz.engine.runner import run, stream

__all__ = ["run", "stream"]
