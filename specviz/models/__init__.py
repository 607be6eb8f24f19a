"""Model loading: `scenes` (embedded, offline), a converted LlamaGen directory, a Lumina-mGPT directory (config.json
model_type 'chameleon', models/lumina_load.py) or a Janus-Pro checkpoint (hub id or local directory)."""
from __future__ import annotations

from functools import lru_cache

ALLOWED_HUB = ("deepseek-community/Janus-Pro-1B", "deepseek-community/Janus-Pro-7B")
MODELS_DIR = "~/.cache/specviz/models"            # where `specviz convert` output is found (env SPECVIZ_MODELS)


def converted_models() -> tuple:
    """Checkpoint directories (converted LlamaGen, Lumina-mGPT with its converted VQGAN) under $SPECVIZ_MODELS or
    MODELS_DIR: allow-listed like hub ids."""
    # the backends' probes load only when the model list is built (no import cost at start-up)
    import os
    from pathlib import Path

    from specviz.models.llamagen import is_llamagen_dir
    from specviz.models.lumina_load import is_lumina
    root = Path(os.environ.get("SPECVIZ_MODELS") or MODELS_DIR).expanduser()
    return tuple(str(p) for p in sorted(root.iterdir()) if is_llamagen_dir(p) or is_lumina(str(p))) \
        if root.is_dir() else ()


@lru_cache(maxsize=4)
def load_model(name: str = "scenes", device: str = "auto"):
    """'scenes' -> the embedded model from assets/; anything else -> a Janus checkpoint (hub id or directory).
    Loaded models are cached per (name, device) and never mutated by a run."""
    if name == "scenes":
        from specviz.models.scenes import ScenesModel  # a backend loads when asked for (its weights, its deps)
        return ScenesModel.load()
    from specviz.models.llamagen import is_llamagen_dir, load_llamagen  # each backend loads when asked for
    if is_llamagen_dir(name):                      # a converted LlamaGen directory (config.json family "llamagen")
        return load_llamagen(name, device=device)
    from specviz.models.lumina_load import is_lumina, load_lumina  # (its weights, its deps: transformers)
    if is_lumina(name):
        return load_lumina(name, device=device)
    from specviz.models.janus import load_janus  # a backend loads when asked for (janus: transformers)
    return load_janus(name, device=device)
