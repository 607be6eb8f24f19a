"""Model loading: `scenes` (embedded, offline) or a Janus-Pro checkpoint (hub id or local directory)."""
from __future__ import annotations

from functools import lru_cache

ALLOWED_HUB = ("deepseek-community/Janus-Pro-1B", "deepseek-community/Janus-Pro-7B")


@lru_cache(maxsize=4)
def load_model(name: str = "scenes", device: str = "auto"):
    """'scenes' -> the embedded model from assets/; anything else -> a Janus checkpoint (hub id or directory).
    Loaded models are cached per (name, device) and never mutated by a run."""
    if name == "scenes":
        from specviz.models.scenes import ScenesModel  # a backend loads when asked for (its weights, its deps)
        return ScenesModel.load()
    from specviz.models.janus import load_janus  # a backend loads when asked for (janus: transformers)
    return load_janus(name, device=device)
