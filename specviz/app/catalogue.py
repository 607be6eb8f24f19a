"""The model catalogue: which models and draft models this app offers (`Catalogue`), loading one with every failure
turned into one clear message (`load`), and checking a typed-in model or draft model against what is offered."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
from huggingface_hub import try_to_load_from_cache

from specviz.core.knobs import ConfigError
from specviz.engine.drafters import drafter_factory
from specviz.models import ALLOWED_HUB, converted_models, load_model

Loader = Callable[..., tuple[Any, Any]]            # (model name[, draft model]) -> (model, tree drafter factory)


@dataclass(frozen=True)
class Catalogue:
    """Where models come from: the app's default loads from assets / the local HF cache; tests inject tiny ones."""
    load: Loader
    models: tuple                                   # names the UI offers
    reruns: tuple = ("scenes",)                     # models on which releasing a slider re-runs the methods
    allow_paths: bool = False                       # accept a local checkpoint directory typed into the UI
    drafters: tuple = ()                            # draft models the UI offers for tree methods ("" = own drafter)


def available_models() -> tuple:
    """'scenes' always; converted directories under $SPECVIZ_MODELS (models.converted_models); the allow-listed
    Janus-Pro checkpoints only when their files are in the local HF cache."""
    out = ["scenes", *converted_models()]
    for repo in ALLOWED_HUB:
        if isinstance(try_to_load_from_cache(repo, "config.json"), str):
            out.append(repo)
    return tuple(out)


class LoadError(ValueError):
    """A model could not be loaded; the message says which and why."""


def load(catalogue: Catalogue, name: str, draft: str = ""):
    """catalogue.load (with a draft model when one is chosen) with every failure turned into one clear LoadError
    (out-of-memory stays itself)."""
    try:
        return catalogue.load(name, draft) if draft else catalogue.load(name)
    except (MemoryError, torch.OutOfMemoryError):
        raise
    except Exception as e:                              # noqa: BLE001 - any loader failure becomes one message
        what = f"model {name!r}" + (f" with draft model {draft!r}" if draft else "")
        raise LoadError(f"could not load {what} ({type(e).__name__}: {e}); "
                        "the app is still usable with the other models") from None


def default_catalogue(device: str = "auto", allow_paths: bool = False, drafters: tuple = ()) -> Catalogue:
    """Models from assets / the local HF cache / $SPECVIZ_MODELS. Draft models offered: `drafters` (e.g. app.py
    --draft-model), the allow-listed Janus-Pro-1B when it is cached, and the converted directories."""

    def load(name: str, draft: str = ""):
        model = load_model(name, device)
        return model, drafter_factory(model, load_model(draft, device) if draft else None)
    cached = tuple(m for m in available_models() if m == ALLOWED_HUB[0] or m in converted_models())
    return Catalogue(load, available_models(), ("scenes",), allow_paths, tuple(dict.fromkeys(drafters + cached)))


def check_model(catalogue: Catalogue, name: str) -> str:
    if name in catalogue.models or (catalogue.allow_paths and name and name.strip()):
        return name.strip()
    raise ConfigError(f"model {name!r} is not offered here; choose one of {', '.join(catalogue.models)} "
                      "(local checkpoint paths need `python app.py --allow-paths`)")


def check_draft(catalogue: Catalogue, name: str) -> str:
    """'' (the model's own drafter), an offered draft model, or — with --allow-paths — a local checkpoint."""
    if name is not None and not isinstance(name, str):
        raise ConfigError(f"draft model must be a name or a path, got {name!r}")
    name = (name or "").strip()
    if not name or name in catalogue.drafters or catalogue.allow_paths:
        return name
    offered = ", ".join(catalogue.drafters) or "none (start the app with --draft-model ID|PATH)"
    raise ConfigError(f"draft model {name!r} is not offered here; offered: {offered}")
