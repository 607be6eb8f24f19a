"""Token ambiguity of a scenes model (model-card section), measured on its own AR samples.

For each AR sample at the run settings (default: RunConfig's temperature, top-k, top-p and CFG) we keep the target
law q_t used at every image position t and measure
- entropy H(q_t) in nats and the top-1 probability max q_t;
- neighbour mass: the share of q_t held by the 8 codes nearest (codebook distance, as LANTERN) to q_t's top-1 code,
  the top-1 itself excluded — how much of the law sits on near-identical codes;
- the detail class of position t: core/detail.py's patch detail of its decoded patch, binned low / mid / high by
  core/detail.DETAIL_EDGES (the one definition the atlas and the bench bin by too).

python -m specviz.scenes.ambiguity [--assets assets] [--n 12]
"""
from __future__ import annotations

import argparse
import json

import numpy as np
import torch

from specviz.core.detail import DETAIL_CLASSES, DETAIL_EDGES, image_classes
from specviz.core.paths import assets_dir
from specviz.core.sampling import entropy, sample, target_probs
from specviz.engine.codebook import neighbour_table
from specviz.engine.config import RunConfig
from specviz.models.scenes import ScenesModel
from specviz.scenes import data
from specviz.scenes.vq import to_tensor


@torch.inference_mode()
def ar_laws(model, caption: list[int], cfg: RunConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """One AR sample for fixed caption tokens: (tokens (N,), target laws (N, V)) under cfg's sampling settings."""
    gen = torch.Generator().manual_seed(cfg.seed)
    n = model.grid[0] * model.grid[1]
    pf = model.prefill(caption, cfg.cfg_scale)
    logits, state = pf.logits, pf.state
    tokens, laws = [], []
    for t in range(n):
        q = target_probs(logits, cfg.temperature, cfg.top_k, cfg.top_p)
        tok = sample(q, gen)
        tokens.append(int(tok))
        laws.append(q)
        if t + 1 < n:
            out, _ = model.forward(state, tok.view(1), torch.tensor([t]))
            model.commit(state, torch.arange(1))
            logits = out[0]
    return torch.tensor(tokens), torch.stack(laws)


def neighbour_mass(laws: torch.Tensor, nbrs: torch.Tensor) -> torch.Tensor:
    """(N, V) laws, (V, k) neighbour table -> (N,) mass on the top-1 code's k nearest other codes."""
    top = laws.argmax(-1)
    return laws.gather(-1, nbrs[top]).sum(-1)


def position_stats(laws: torch.Tensor, nbrs: torch.Tensor) -> dict[str, np.ndarray]:
    """Per-position entropy (nats), top-1 probability and neighbour mass, as numpy arrays."""
    return {"entropy": entropy(laws).numpy(), "top1": laws.max(-1).values.numpy(),
            "nbr_mass": neighbour_mass(laws, nbrs).numpy()}


def summarise(stats: dict[str, np.ndarray], classes: np.ndarray) -> dict:
    """Means overall and per detail class, plus the low/high entropy ratio."""
    out = {k: round(float(v.mean()), 4) for k, v in stats.items()}
    per = {}
    for i, name in enumerate(DETAIL_CLASSES):
        m = classes == i
        per[name] = {"share": round(float(m.mean()), 4),
                     **{k: round(float(v[m].mean()), 4) if m.any() else None for k, v in stats.items()}}
    out["per_detail_class"] = per
    lo, hi = per["low"]["entropy"], per["high"]["entropy"]
    out["low_over_high_entropy"] = round(lo / hi, 3) if lo is not None and hi else None
    return out


def measure(model, n: int = 12, seed: int = 0, cfg: RunConfig | None = None, k: int = 8) -> dict:
    """Ambiguity of `model` over n AR samples of held-out captions (sample i uses seed + i)."""
    cfg = cfg or RunConfig()
    nbrs = neighbour_table(model, k)
    rng = np.random.default_rng(seed)
    stats, classes = [], []
    for i in range(n):
        scene = data.random_scene(rng, held_out=True)
        tokens, laws = ar_laws(model, scene.tokens(), RunConfig(**{**cfg.to_dict(), "seed": seed + i}))
        image = np.asarray(model.decode_image(tokens))
        stats.append(position_stats(laws, nbrs))
        classes.append(image_classes(image, model.grid))
    cat = {key: np.concatenate([s[key] for s in stats]) for key in stats[0]}
    return {"samples": n, "positions": int(len(cat["entropy"])), "neighbours": k, "log_vocab": round(
        float(np.log(model.codebook_size)), 3), "detail_edges": list(DETAIL_EDGES),
        "temperature": cfg.temperature, "top_k": cfg.top_k, "top_p": cfg.top_p, "cfg": cfg.cfg_scale,
        **summarise(cat, np.concatenate(classes))}


def plugin_entropy(samples: np.ndarray) -> np.ndarray:
    """(K, N) integer samples -> (N,) Miller-Madow entropy estimate (nats) of each column's law."""
    k = len(samples)
    out = np.empty(samples.shape[1])
    for j in range(samples.shape[1]):
        _, counts = np.unique(samples[:, j], return_counts=True)
        p = counts / k
        out[j] = -(p * np.log(p)).sum() + (len(counts) - 1) / (2 * k)
    return out


@torch.no_grad()
def texture_entropy(vq, render, n: int = 8, k: int = 96, seed: int = 5) -> dict:
    """How ambiguous the *world* is under a tokenizer, before any target is trained: for n held-out scenes, draw
    the same layout under k fresh textures (render(scene, layout_rng, texture_rng) -> uint8 image), encode them,
    and estimate each position's code entropy (Miller-Madow). A target that knew the caption and the layout
    could not do better than this on texture; its own entropy adds layout and model uncertainty.
    Returned per detail class of the first drawing, as `summarise` does (core/detail.py's classes, here of the drawn
    image itself: there is no decoder in this measure, so a position's class is its raw texture's, which runs a
    little higher than a VQ round-trip's)."""
    rng = np.random.default_rng(seed)
    ents, classes = [], []
    for _ in range(n):
        scene, layout = data.random_scene(rng, held_out=True), int(rng.integers(1 << 30))
        imgs = np.stack([render(scene, np.random.default_rng(layout), np.random.default_rng(seed * 1000 + j))
                         for j in range(k)])
        codes = vq.encode(to_tensor(imgs))[0]
        ents.append(plugin_entropy(codes.flatten(1).numpy()))
        classes.append(image_classes(imgs[0], tuple(codes.shape[1:])))
    return {"scenes": n, "textures": k, **summarise({"entropy": np.concatenate(ents)}, np.concatenate(classes))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--assets", default=str(assets_dir()))
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(json.dumps(measure(ScenesModel.load(args.assets), args.n), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
