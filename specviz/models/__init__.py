"""Model loading: `scenes` (embedded, offline), a converted LlamaGen directory, or a Janus-Pro checkpoint (hub id or
local directory)."""
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
    from specviz.models.llamagen import is_llamagen_dir, load_llamagen
    if is_llamagen_dir(name):                      # a converted LlamaGen directory (config.json family "llamagen")
        return load_llamagen(name, device=device)
    from specviz.models.janus import load_janus
    return load_janus(name, device=device)
