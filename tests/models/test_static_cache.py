"""The static KV cache of every backend (models/base.py): 300 random forward/commit pairs (chains and
trees, random kept paths, empty commits) on each tiny backend in its released layout. The cache tensors are never
reallocated (same data_ptr from prefill to the last commit) and one random fed node's guided logits per pair equal
the reference:
a fresh state of the same model, prefilled with the same prompt, fed the committed tokens plus the node's root path
as one causal chain (no rollback, no compaction, no stale rows), to 1e-5 of the logits' scale (max |logit|, at least
1: float32 sums in another order, amplified by CFG's u + s (c - u), differ by a few 1e-6 of it)."""
from __future__ import annotations

import random

import pytest
import torch

from specviz.engine.drafters.draft_tree import ancestor_rows
from specviz.models.llamagen import LlamaGenModel
from specviz.models.llamagen_net import LlamaGenGPT
from specviz.models.scenes import tiny
from tests.support import llamagen_tiny as lt

PAIRS = 300
TOL = 1e-5


def cache_tensors(state) -> list[torch.Tensor]:
    """Every K/V tensor of a backend's state: (keys, values) pairs (scenes, LlamaGen) or a transformers cache."""
    pairs = getattr(state, "kv", None) or state.cache
    layers = getattr(pairs, "layers", None)
    pairs = [(x.keys, x.values) for x in layers] if layers is not None else pairs
    return [x for pair in pairs for x in pair]


def random_feed(rng: random.Random, committed: int, free: int):
    """A chain (mask None) or a random tree of 1..8 nodes whose root sits at image position `committed`:
    (positions, parents, tree mask or None)."""
    n = rng.randint(1, min(8, free))
    if rng.random() < 0.5:
        parents = [-1] + [i - 1 for i in range(1, n)]
        return torch.arange(committed, committed + n), parents, None
    parents, depth = [-1], [0]
    for i in range(1, n):
        p = rng.randrange(i)
        if depth[p] + 1 >= free:                              # stay inside the grid
            p = 0
        parents.append(p), depth.append(depth[p] + 1)
    return committed + torch.tensor(depth), parents, torch.tensor(ancestor_rows(parents))


def path_to(parents: list[int], node: int) -> list[int]:
    out = []
    while node != -1:
        out.append(node)
        node = parents[node]
    return out[::-1]


def reference(model, prompt, cfg: float, committed: list[int], path_tokens: list[int]) -> torch.Tensor:
    """The law after committed + path as one causal chain on a fresh state."""
    pf = model.prefill(prompt, cfg)
    seq = committed + path_tokens
    logits, _ = model.forward(pf.state, torch.tensor(seq), torch.arange(len(seq)))
    model.commit(pf.state, torch.arange(0))
    return logits[-1]


def exercise(model, prompt, cfg: float, pairs: int, seed: int = 0) -> dict:
    """Run `pairs` random forward/commit pairs; a new state when the grid is full. Returns counts for the caller."""
    rng = random.Random(seed)
    g = torch.Generator().manual_seed(seed)
    grid = model.grid[0] * model.grid[1]
    states, trees, kept_total = 0, 0, 0
    done = 0
    while done < pairs:
        pf = model.prefill(prompt, cfg)
        states += 1
        ptrs = [x.data_ptr() for x in cache_tensors(pf.state)]
        committed: list[int] = []
        model.forward(pf.state, torch.randint(0, model.codebook_size, (8,), generator=g), torch.arange(8))
        model.commit(pf.state, torch.arange(0))                      # stale scratch rows first: nothing is kept
        while done < pairs and len(committed) < grid - 1:
            free = grid - len(committed)
            positions, parents, mask = random_feed(rng, len(committed), free)
            tokens = torch.randint(0, model.codebook_size, (len(parents),), generator=g)
            logits, _ = model.forward(pf.state, tokens, positions, mask)
            trees += mask is not None
            node = rng.randrange(len(parents))                       # one node's law against the reference
            path = path_to(parents, node)
            want = reference(model, prompt, cfg, committed, tokens[path].tolist())
            err, scale = (logits[node] - want).abs().max().item(), max(1.0, want.abs().max().item())
            assert err <= TOL * scale, f"{model.name} pair {done} node {node}: |diff| {err:.3g} > 1e-5 x {scale:.3g}"
            keep = path[:rng.choice([0, 0, 1, len(path)])]           # empty, one token or the whole path
            keep = keep[:free - 1]
            model.commit(pf.state, torch.tensor(keep, dtype=torch.long))
            committed += tokens[keep].tolist()
            kept_total += len(keep)
            done += 1
            assert [x.data_ptr() for x in cache_tensors(pf.state)] == ptrs, f"{model.name}: the cache was reallocated"
    return {"states": states, "trees": trees, "kept": kept_total}


def scenes_model():
    return tiny(codes=8, grid=6, seed=0)


def llamagen_model():
    cfg = lt.tiny_gpt(grid=6)
    gpt = LlamaGenGPT(cfg)
    gpt.load_state_dict(lt.gpt_weights(cfg, 0))
    return LlamaGenModel(gpt, None, name="tiny-llamagen")


def llamagen_prompt(model):
    c = model.gpt.cfg
    g = torch.Generator().manual_seed(3)
    return torch.randn(c.cls_token_num, c.caption_dim, generator=g), torch.arange(c.cls_token_num) < 9


@pytest.fixture(scope="module")
def janus(tmp_path_factory):
    from specviz.models.janus import load_janus
    from tests.support.janus_tiny import make_tiny_checkpoint
    path = tmp_path_factory.mktemp("janus") / "ckpt"
    make_tiny_checkpoint(path)
    return load_janus(str(path), device="cpu")


@pytest.fixture(scope="module")
def lumina(tmp_path_factory):
    from specviz.models.lumina_load import load_lumina
    from tests.support.lumina_tiny import make_tiny_lumina
    return load_lumina(str(make_tiny_lumina(tmp_path_factory.mktemp("lumina") / "ckpt")), "cpu")


def check_counts(out: dict) -> None:
    assert out["trees"] > PAIRS // 4 and out["kept"] > PAIRS // 4 and out["states"] >= 2, out


def test_scenes_static_cache():
    check_counts(exercise(scenes_model(), "red house", 3.0, PAIRS))


@pytest.mark.slow                       # about 20-30 s each on two shared cores
def test_llamagen_static_cache():
    model = llamagen_model()
    check_counts(exercise(model, llamagen_prompt(model), 3.0, PAIRS))


@pytest.mark.slow                       # about 20-30 s each on two shared cores
def test_janus_static_cache(janus):
    check_counts(exercise(janus, "a red house", 3.0, PAIRS))


@pytest.mark.slow                       # about 20-30 s each on two shared cores
def test_lumina_static_cache(lumina):
    check_counts(exercise(lumina, "a red house", 3.0, PAIRS))


def compiled_shapes(model):
    """The compiled path's shapes without the compiler: padded to buckets, capacity-wide masks (compile() with
    torch.compile as the identity)."""
    from specviz.models import base
    model.compiled, model.rows_for = True, base.bucket
    return model


def scenes_pairs():
    """A short run of the same check on the scenes backend, eager and at the compiled shapes (the mutation check's
    detector)."""
    exercise(scenes_model(), "red house", 3.0, 40, seed=1)
    exercise(compiled_shapes(scenes_model()), "red house", 3.0, 40, seed=1)


@pytest.mark.parametrize("which", ["scenes", "llamagen", "janus", "lumina"])
def test_padded_forwards_keep_the_cache_and_the_laws(which, request, monkeypatch):
    """The compiled path's shapes (every forward padded to a power of two, padding rows masked, masks as wide as the
    capacity) on each backend: 60 pairs, the same checks."""
    from specviz.models import base
    model = {"scenes": scenes_model, "llamagen": llamagen_model}.get(which, lambda: request.getfixturevalue(which))()
    monkeypatch.setattr(model, "rows_for", base.bucket)
    monkeypatch.setattr(model, "compiled", True)
    prompt = llamagen_prompt(model) if which == "llamagen" else "a red house" if which != "scenes" else "red house"
    exercise(model, prompt, 3.0, 60, seed=2)
