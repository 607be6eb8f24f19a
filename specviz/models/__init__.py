"""Model loading: `scenes` (embedded, offline) or a Janus-Pro checkpoint (hub id or local directory)."""
from __future__ import annotations

import weakref
from functools import lru_cache
from pathlib import Path

ALLOWED_HUB = ("deepseek-community/Janus-Pro-1B", "deepseek-community/Janus-Pro-7B")


@lru_cache(maxsize=4)
def load_model(name: str = "scenes", device: str = "auto"):
    """'scenes' -> the embedded model from assets/; anything else -> a Janus checkpoint (hub id or directory).
    Loaded models are cached per (name, device) and never mutated by a run."""
    if name == "scenes":
        from specviz.models.scenes import ScenesModel
        return ScenesModel.load()
    from specviz.models.janus import load_janus
    return load_janus(name, device=device)


def drafter_factory(model, draft_model=None):
    """The tree drafter of a model: a draft model when given, else the trained EAGLE head shipped with `scenes`.
    Returns factory(model, cfg, gen) or None when the model has no drafter (tree methods then fail clearly)."""
    if draft_model is not None:
        from specviz.drafters.model import ModelDrafter
        same = (draft_model.codebook_size == model.codebook_size and tuple(draft_model.grid) == tuple(model.grid))
        if not same:
            raise ValueError(
                f"--draft-model {getattr(draft_model, 'name', '?')!r} ({draft_model.codebook_size} codes, "
                f"{draft_model.grid[0]}x{draft_model.grid[1]} grid) does not match --model "
                f"{getattr(model, 'name', '?')!r} ({model.codebook_size} codes, {model.grid[0]}x{model.grid[1]} "
                "grid): a draft model must share the target's image tokenizer (e.g. Janus-Pro-1B for -7B)")
        return lambda m, cfg, gen: ModelDrafter(draft_model, cfg, gen)
    head = _scenes_head(model) if getattr(model, "name", "") == "scenes" else None
    if head is None:
        return None
    from specviz.drafters.tree import HeadDrafter
    return lambda m, cfg, gen: HeadDrafter(head, m, cfg, gen)


_HEADS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()     # model -> its draft head (or None)


def _scenes_head(model):
    if model not in _HEADS:
        from specviz.drafters.tree import load_head
        from specviz.models.scenes import ASSETS
        path = Path(ASSETS) / "drafter.safetensors"
        _HEADS[model] = load_head(model.target, path) if path.exists() else None
    return _HEADS[model]
