"""Per-model tables over the codebook (LANTERN's latent neighbours), computed once per model and cached weakly by
the model object (a new model never sees a stale table)."""
from __future__ import annotations

import weakref

import torch

_NBR_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # model -> {k: (V, k) table}
_NBR_CHUNK_FLOATS = 1 << 24            # distance rows per chunk x V <= 16M floats (64 MB), whatever the codebook size


def neighbour_table(model, k: int) -> torch.Tensor:
    """(V, k) nearest other codes by codebook distance (LANTERN), computed once per model, on the host.
    Distances are computed a block of rows at a time (never the full V x V matrix: 1 GB for 16384 codes)."""
    tables = _NBR_CACHE.setdefault(model, {})            # weak keys: a new model never sees a stale table
    if k not in tables:
        v = model.code_vectors().float()
        n = v.shape[0]
        rows = max(1, _NBR_CHUNK_FLOATS // n)
        out = []
        for i in range(0, n, rows):
            d = torch.cdist(v[i:i + rows], v)                                   # (rows, V)
            d[torch.arange(d.shape[0]), torch.arange(i, i + d.shape[0])] = float("inf")   # not its own neighbour
            out.append(d.topk(k, largest=False).indices.cpu())
        tables[k] = torch.cat(out)
    return tables[k]


_EMB_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # model -> (V, h) table


def embedding_table(model) -> torch.Tensor:
    """(V, h) float32 host copy of the target's input embeddings of every image code (`model.embed_tokens`): the
    space released GSD measures distances in (junhyukso/GSD scheduler/jacobi_iteration_lumina_mgpt.py:1197-1199,
    `embed_tokens.weight`). It differs from `code_vectors()` (the decoder's codebook geometry) for every model here:
    scenes feeds the target its own learned image embedding, Janus-Pro its generation embedding + aligner."""
    if model not in _EMB_CACHE:
        ids = torch.arange(model.codebook_size)
        _EMB_CACHE[model] = torch.cat([model.embed_tokens(ids[i:i + 4096]).float().cpu()
                                       for i in range(0, len(ids), 4096)])
    return _EMB_CACHE[model]
