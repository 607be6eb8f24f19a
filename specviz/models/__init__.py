"""Model loading: `scenes` (embedded, offline), a Lumina-mGPT directory (config.json model_type 'chameleon',
models/lumina_load.py) or a Janus-Pro checkpoint (hub id or local directory)."""
from __future__ import annotations

from functools import lru_cache

ALLOWED_HUB = ("deepseek-community/Janus-Pro-1B", "deepseek-community/Janus-Pro-7B")


@lru_cache(maxsize=4)
def load_model(name: str = "scenes", device: str = "auto"):
    """'scenes' -> the embedded model from assets/; anything else -> a Janus checkpoint (hub id or directory).
    Loaded models are cached per (name, device) and never mutated by a run."""
    if name == "scenes":
        from specviz.models.scenes import ScenesModel
        return ScenesModel.load()
    from specviz.models.lumina_load import is_lumina, load_lumina
    if is_lumina(name):
        return load_lumina(name, device=device)
    from specviz.models.janus import load_janus
    return load_janus(name, device=device)
