"""Shared app-test setups: a tiny injected backend (fast), optionally slowed down to exercise Stop."""
import time
from dataclasses import asdict

import pytest

from specviz.app.catalogue import Catalogue
from tests.support.toy import toy


class Slow:
    """Delegates to a model; each target forward sleeps `delay` seconds and is counted."""

    def __init__(self, model, delay: float = 0.0):
        self.inner, self.delay, self.forwards = model, delay, 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def forward(self, *a, **k):
        self.forwards += 1
        if self.delay:
            time.sleep(self.delay)
        return self.inner.forward(*a, **k)


RACE_KW = dict(prompt="a red house", seed=5, window=4, tree_depth=3, tree_topk=2, tau_pos=0.5, tau_seq=0.5)


def tiny_backend(codes=8, grid=4, delay=0.0):
    """(backend, slow model wrapper, factory): every model name loads the same tiny model + random tree head."""
    model, factory = toy(codes=codes, grid=grid)
    slow = Slow(model, delay)
    return Catalogue(lambda name: (slow, factory), ("scenes",), ("scenes",)), slow, factory


def knob_inputs(methods, prompt="a red house on the left", seed=3, **over) -> dict:
    """/generate's inputs by name (handlers.GEN_INPUTS, then the map opacity)."""
    from specviz.app.handlers import GEN_INPUTS
    from specviz.engine.config import RunConfig
    vals = asdict(RunConfig()) | dict(
        prompt=prompt, seed=seed, model="scenes", methods=list(methods), lam=0.3, delta=0.5, tau_pos=0.9,
        tau_seq=0.9, temperature=1.0, top_k=0, cfg=3.0, window=4, tree="dynamic", tree_depth=3, tree_topk=2,
        cascade_budget=0.5)
    vals.update(over)
    return {k: vals[k] for k in GEN_INPUTS} | {"opacity": 1.0}


def knob_args(methods, **kw) -> list:
    """The same, positional in the API's parameter order (for gradio_client calls)."""
    return list(knob_inputs(methods, **kw).values())


def fingerprint(outputs) -> tuple:
    """What a /generate or /open_traces answer shows, minus timings: summary rows and the final images' pixels."""
    import hashlib

    import numpy as np
    from PIL import Image

    from specviz.app.handlers import GEN_OUTPUTS
    from specviz.engine.registry import METHODS
    rows = tuple(tuple(r[:-1]) for r in outputs[GEN_OUTPUTS.index("summary")]["data"])    # last column: time s
    pixels = []
    for m in METHODS:
        path = outputs[GEN_OUTPUTS.index(f"img_{m}")]
        if m in {r[0] for r in rows}:
            pixels.append(hashlib.sha256(np.asarray(Image.open(path).convert("RGB")).tobytes()).hexdigest())
    return rows, tuple(pixels)


@pytest.fixture(scope="module", autouse=True, name="_gradio_tmp")
def module_gradio_tmp(tmp_path_factory):
    """One Gradio cache dir for a whole module whose server outlives single tests (import it into the module; it
    replaces conftest's per-test one)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
        yield


def serve_checkpoints(target: str, draft: str, export_root: str):
    """Serve the app on a local target checkpoint with one offered draft model (--allow-paths); yields a
    gradio_client Client (one torch thread)."""
    import torch
    from gradio_client import Client

    import app
    from specviz.app.catalogue import default_catalogue
    torch.set_num_threads(1)
    base = default_catalogue("cpu", allow_paths=True, drafters=(draft,))
    backend = Catalogue(base.load, (target,), (), True, base.drafters)
    demo = app.build_demo(backend, fps=1000, export_root=export_root)
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True)
    client = Client(url, verbose=False)
    try:
        yield client
    finally:
        client.close()
        demo.close()
