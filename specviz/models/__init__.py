"""Model loading through one backend table (BACKENDS: probe -> loader): `scenes` (embedded, offline), a converted
LlamaGen directory, a Lumina-mGPT directory (config.json model_type 'chameleon', models/lumina_load.py) or a
Janus-Pro checkpoint (hub id or local directory). A backend's module, weights and deps (transformers) load only when
it is probed or asked for, never at start-up."""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

ALLOWED_HUB = ("deepseek-community/Janus-Pro-1B", "deepseek-community/Janus-Pro-7B")
MODELS_DIR = "~/.cache/specviz/models"            # where `specviz convert` output is found (env SPECVIZ_MODELS)


def _lazy(module: str, attr: str) -> Callable:
    """`module.attr` (dotted), resolved at each call, not at import (so a monkeypatched attribute is the one called)."""
    def call(*args, **kw):
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj(*args, **kw)
    return call


@dataclass(frozen=True, kw_only=True)
class Backend:
    """One row of the backend table: probe(name) says whether `name` is this backend's; load(name, device=...)."""
    name: str
    probe: Callable[[str], bool]
    load: Callable[..., object]
    directory: bool = False                        # a local checkpoint directory: listed by converted_models
    own_drafter: bool = False                      # its models draft trees themselves (an EAGLE head): no draft model
    embedded: bool = False                         # the embedded scenes world: its caption grammar parses prompts, and
    #                                                its scorer and region head give the bench's quality columns and
    #                                                the atlas's regions


BACKENDS = (                                       # probed in this order; the first that says yes loads the name
    Backend(name="scenes", probe=lambda name: name == "scenes",
            load=lambda name, device: _lazy("specviz.models.scenes", "ScenesModel.load")(), own_drafter=True,
            embedded=True),
    Backend(name="llamagen", probe=_lazy("specviz.models.llamagen", "is_llamagen_dir"),    # config.json family
            load=_lazy("specviz.models.llamagen", "load_llamagen"), directory=True),
    Backend(name="lumina", probe=_lazy("specviz.models.lumina_load", "is_lumina"),         # model_type chameleon
            load=_lazy("specviz.models.lumina_load", "load_lumina"), directory=True),
    Backend(name="janus", probe=lambda name: True,                                         # the rest: hub id or dir
            load=_lazy("specviz.models.janus", "load_janus")),
)


def backend_for(name: str) -> Backend:
    """The table's first backend whose probe claims `name` (Janus claims whatever the others do not)."""
    return next(b for b in BACKENDS if b.probe(name))


def offers_own_drafter(name: str) -> bool:
    """Whether `name`'s backend drafts trees for itself (its row says so; nothing is loaded to ask)."""
    return backend_for(name).own_drafter


def is_embedded(name: str) -> bool:
    """Whether `name` is the embedded scenes world (its backend's row says so; nothing is loaded to ask)."""
    return backend_for(name).embedded


def converted_models() -> tuple:
    """Checkpoint directories (converted LlamaGen, Lumina-mGPT with its converted VQGAN) under $SPECVIZ_MODELS or
    MODELS_DIR: allow-listed like hub ids."""
    root = Path(os.environ.get("SPECVIZ_MODELS") or MODELS_DIR).expanduser()
    return tuple(str(p) for p in sorted(root.iterdir()) if any(b.probe(str(p)) for b in BACKENDS if b.directory)) \
        if root.is_dir() else ()


_COMPILE = [False]                                 # the process-wide --compile switch (use_compile)


def use_compile(on: bool = True) -> None:
    """--compile (CLI, app start, API): models loaded from now on torch.compile their fixed-shape verification
    forward (`model.compile()`, models/base.py). Refuses at once, in one line (base.CompileUnavailable, a
    ValueError), where torch.compile cannot compile on this machine."""
    if on:
        # torch and the backends' helpers load only when compilation is asked for
        from specviz.models.base import check_compile
        check_compile()
    _COMPILE[0] = bool(on)


@lru_cache(maxsize=4)
def _load(name: str, device: str, compile: bool):
    model = backend_for(name).load(name, device=device)
    return model.compile() if compile else model


def load_model(name: str = "scenes", device: str = "auto", compile: bool | None = None):
    """'scenes' -> the embedded model from assets/; a converted LlamaGen or Lumina-mGPT directory -> that backend;
    anything else -> a Janus checkpoint (hub id or directory). compile: torch.compile its verification forward (None:
    as use_compile set it). Loaded models are cached per (name, device, compile) and never mutated by a run."""
    return _load(name, device, _COMPILE[0] if compile is None else bool(compile))


load_model.cache_clear = _load.cache_clear        # type: ignore[attr-defined]
