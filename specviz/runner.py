"""The README's library path (`from specviz.runner import stream, run`), kept as public API: the runner lives in
specviz/models/runner.py, and code inside the repository imports it from there (tests/project/test_one_home.py)."""
from specviz.models.runner import run, stream

__all__ = ["run", "stream"]
