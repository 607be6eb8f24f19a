"""Hugging Face ZeroGPU: when the `spaces` package is importable (a GPU Space), the handlers that run models do so
inside `spaces.GPU` with a duration that fits the run; elsewhere (no `spaces`, or `spaces` outside a ZeroGPU Space,
where its decorator returns the function itself) nothing changes."""
from __future__ import annotations

from typing import Callable

BASE_S, PER_METHOD_S, MAX_S = 30, 20, 300      # a GPU lease: setup + per compared method, capped


def run_seconds(handlers, inputs: dict) -> int:
    """The lease for one run: BASE_S + PER_METHOD_S per method asked for (Janus-Pro-7B on an H200: ~10 s each)."""
    methods = inputs.get("methods") if isinstance(inputs, dict) else None
    return int(min(MAX_S, BASE_S + PER_METHOD_S * len(methods or [1])))


def on_gpu(duration: int | Callable) -> Callable:
    """Decorator: `spaces.GPU(duration=...)(fn)` when `spaces` is importable, else `fn` itself."""
    def wrap(fn):
        try:
            import spaces  # optional: present on Hugging Face Spaces only
        except ImportError:
            return fn
        return spaces.GPU(duration=duration)(fn)
    return wrap
