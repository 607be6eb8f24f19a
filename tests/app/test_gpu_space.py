"""A GPU Space (Hugging Face ZeroGPU): with the `spaces` package importable, the handlers that run models go
through spaces.GPU with a duration that fits the run; without it the handlers are the plain functions. Each case
imports the app in a fresh interpreter (decoration happens at import time)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
from specviz.app.handlers import Handlers
calls = getattr(sys.modules.get("spaces"), "CALLS", None)
print(json.dumps({"calls": calls, "plain": Handlers.generate.__qualname__}))
"""
FAKE = """
CALLS = []
def GPU(task=None, *, duration=None, **kw):
    def wrap(fn):
        def gpu(*a, **k):
            return fn(*a, **k)
        gpu.__qualname__ = "gpu(" + fn.__qualname__ + ")"
        CALLS.append([fn.__qualname__, duration if isinstance(duration, int) else getattr(duration, "__name__", "")])
        return gpu
    return wrap
"""


def probe(tmp_path, spaces_source: str | None) -> dict:
    path = [str(ROOT)]
    if spaces_source is not None:
        (tmp_path / "spaces").mkdir()
        (tmp_path / "spaces" / "__init__.py").write_text(spaces_source)
        path.insert(0, str(tmp_path))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": os.pathsep.join(path)}
    pre = "" if spaces_source is not None else "import sys; sys.modules['spaces'] = None\n"
    out = subprocess.run([sys.executable, "-c", pre + PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_spaces_gpu_wraps_the_model_work(tmp_path):
    got = probe(tmp_path, FAKE)
    assert sorted(got["calls"]) == sorted([["Handlers.generate", "run_seconds"], ["Handlers.open_traces", 30],
                                           ["Handlers.sweep", 300]])
    assert got["plain"] == "gpu(Handlers.generate)"


@pytest.mark.slow
def test_without_spaces_the_app_is_unchanged(tmp_path):
    got = probe(tmp_path, None)
    assert got["calls"] is None and got["plain"] == "Handlers.generate"


def test_the_lease_fits_the_run():
    from specviz.app.gpu import MAX_S, run_seconds
    assert run_seconds(None, {"methods": ["ar", "sjd"]}) == 70
    assert run_seconds(None, {"methods": list("x" * 40)}) == MAX_S


def test_real_spaces_outside_a_space_returns_the_function():
    spaces = pytest.importorskip("spaces")

    def f(x):
        return x + 1
    assert spaces.GPU(duration=10)(f)(1) == 2
