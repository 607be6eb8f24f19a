"""What a run's stream costs its consumers: API callers (gradio_client marks its requests `x-gradio-user: api`)
fetch every picture of every streamed update as a file, at ~70 ms of client CPU each here (a fresh httpx client and
TLS context per file): a browser-rate stream of a four-method run made ~1,000 fetches and took 115 s instead of 8 s.
They get a lean stream (Handlers._stream, lean): API_FPS updates a second, the race pictures at most every
API_PICTURES_EVERY_S, the maps only with the final update, which always carries every output (it is the call's
result). And the server's memory: `trimmed_heap` hands freed C-heap pages back after a run or an export."""
from __future__ import annotations

import contextlib

from specviz.analysis.views import map_outputs
from specviz.core import heap

API_FPS = 2.0
API_PICTURES_EVERY_S = 2.0


def is_api_call(request) -> bool:
    """Whether a gr.Request comes from gradio_client (it sends `x-gradio-user: api` with every call), not a page."""
    headers = getattr(request, "headers", None) or {}
    return headers.get("x-gradio-user") == "api"


def only_changed(upd: dict, sent: dict) -> dict:
    """A streamed update with every picture that is the very object sent last time (a finished lane), and every map
    not in it, as None: a client that fetches files fetches nothing. Not gr.skip(): each skipped picture left a
    component copy in the session for good (Gradio 6.31; scripts/soak.py counted +25 images a run). `sent`
    (picture name -> object) is updated. Text and None go out as values: skipping them saves no fetch and costs more
    server time than resending (docs/gradio.md)."""
    out = upd | {name: None for name in map_outputs() if name not in upd}
    for name, v in out.items():
        if v is None or not name.startswith(("img_", "map_")):
            continue
        if sent.get(name) is v:
            out[name] = None
        sent[name] = v
    return out


@contextlib.contextmanager
def trimmed_heap():
    """Run a block, then hand the C heap's free pages back to the system (core/heap.trim: glibc's malloc_trim).
    A run or an export frees its big buffers (an export's video frames: ~300 MB) but glibc keeps the pages: the
    server's resident memory climbed to each new high-water mark and stayed (scripts/soak.py). Costs a few ms."""
    try:
        yield
    finally:
        heap.trim()
