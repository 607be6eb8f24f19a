"""One clear line for any failure of a handler (gr.Error), and the memory released after an out-of-memory."""
from __future__ import annotations

import functools
import gc
import inspect
import logging

import gradio as gr
import torch

from specviz.core.knobs import ConfigError

log = logging.getLogger("specviz.app")
OOM_MESSAGE = ("Out of memory during this run; its memory has been released. Try fewer methods, a shorter window or "
               "tree, or a smaller model (the app is ready for the next run).")


def friendly(fn):
    """Turn any exception into one clear gr.Error line; works for plain and generator handlers. The error is raised
    outside the `except` block so that it carries no traceback of the failed run: the run's frames (models' caches,
    partial traces) are freed at once, and after an out-of-memory the garbage is collected before the message."""
    def explain(e: Exception) -> gr.Error:
        if isinstance(e, gr.Error):
            return gr.Error(e.message, duration=e.duration)
        if isinstance(e, (ConfigError, ValueError, FileNotFoundError)):
            return gr.Error(str(e).removeprefix("--"))          # CLI flag names read as plain knob names here
        if _out_of_memory(e):
            log.warning("handler %s ran out of memory: %s", fn.__name__, str(e))   # str: keep no frames alive
            return gr.Error(OOM_MESSAGE)
        log.exception("handler %s failed", fn.__name__)
        return gr.Error(f"Unexpected error ({type(e).__name__}): {e}")

    def fail(err: gr.Error):
        if err.message == OOM_MESSAGE:
            release_memory()
        raise err

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen(*a, **k):
            try:
                yield from fn(*a, **k)
                return
            except Exception as e:                      # noqa: BLE001 - surfaced as one UI line
                err = explain(e)
            fail(err)
        return gen

    @functools.wraps(fn)
    def plain(*a, **k):
        try:
            return fn(*a, **k)
        except Exception as e:                          # noqa: BLE001
            err = explain(e)
        fail(err)
    return plain


def _out_of_memory(e: Exception) -> bool:
    if isinstance(e, (MemoryError, torch.OutOfMemoryError)):
        return True
    text = str(e).lower()
    return isinstance(e, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


def release_memory() -> None:
    """After an aborted run: drop its garbage now and hand cached accelerator blocks back."""
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
