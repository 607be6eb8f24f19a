"""The atlas's column names, torch-free (render/atlas_fig.py draws by them without loading the engine)."""
from __future__ import annotations

METRICS = ("acceptance", "relaxation", "tv_cost")
MAP_KEYS = ("finalize", "exact", "relaxed", "resampled", "tv_cost")
