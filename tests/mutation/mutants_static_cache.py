"""Wrong variants of the static KV cache (models/base.py, models/scenes.py; protocol: tests/support/mutants.py),
each killed by a short run of the 300-pair check (tests/models/test_static_cache.py)."""
from __future__ import annotations

import torch

from specviz.models import base, scenes
from tests.models.test_compile import test_padding_rows_are_invisible as padding_rows_invisible
from tests.models.test_static_cache import scenes_pairs
from tests.support.mutants import Mutant

_MASK, _COMMIT = base.static_mask, scenes.ScenesModel.commit


def _no_compaction(caches, t, kept, device):
    """Wrong: the kept rows stay where the tree forward wrote them (a path that skips a node is not moved down)."""


def _stale_visible(prefix, inner, capacity):
    """Wrong: every row after the scratch region is visible too (stale rows of dropped drafts)."""
    out = _MASK(prefix, inner, capacity)
    out[..., prefix.shape[-1] + inner.shape[-1]:] = True
    return out


def _scratch_visible(prefix, inner, capacity):
    """Wrong: every scratch row sees every other (no causal / ancestor mask among the fed tokens)."""
    return _MASK(prefix, torch.ones_like(inner), capacity)


def _reallocating_commit(self, state, kept):
    """Wrong: commit builds new cache tensors (as DynamicCache.crop and a doubling cat did), values unchanged."""
    _COMMIT(self, state, kept)
    state.kv = [(k.clone(), v.clone()) for k, v in state.kv]


VARIANTS = [
    Mutant("static cache: commit without compacting the kept path", lambda mp: mp.setattr(
        scenes, "compact_path", _no_compaction), (scenes_pairs,)),
    Mutant("static cache: stale rows after the scratch region visible", lambda mp: mp.setattr(
        scenes, "static_mask", _stale_visible), (scenes_pairs,)),
    Mutant("static cache: scratch rows see each other (no tree / causal mask)", lambda mp: mp.setattr(
        scenes, "static_mask", _scratch_visible), (scenes_pairs,)),
    Mutant("static cache: commit reallocates the cache tensors", lambda mp: mp.setattr(
        scenes.ScenesModel, "commit", _reallocating_commit), (scenes_pairs,)),
]


def _padding_seen(inner, size):
    """Wrong: the fed rows of a compiled (bucketed) forward also see its padding rows."""
    out = base.torch.ones(size, size, dtype=base.torch.bool)
    out[:inner.shape[0], :inner.shape[0]] = inner
    return out


VARIANTS.append(Mutant("static cache: the fed rows see the padding rows", lambda mp: mp.setattr(
    base, "padded_inner", _padding_seen), (padding_rows_invisible,)))
