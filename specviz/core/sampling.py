"""Logits -> probabilities and the small pure measures every rule uses. All float32 (docs/algorithms.md pitfall 3)."""
from __future__ import annotations

import math

import torch


def target_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> torch.Tensor:
    """(..., V) guided logits -> (..., V) float32 law: temperature, then top-k, then top-p, then softmax.
    temperature 0 is greedy: a one-hot law on the argmax."""
    logits = logits.float()
    if temperature == 0:
        return torch.nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).float()
    logits = logits / temperature
    if 0 < top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        srt, idx = logits.sort(-1, descending=True)
        cum = srt.softmax(-1).cumsum(-1)
        drop = cum - srt.softmax(-1) >= top_p                      # keep the smallest set reaching top_p
        logits = logits.masked_fill(drop.scatter(-1, idx, drop), float("-inf"))
    return logits.softmax(-1)


def entropy(q: torch.Tensor, norm: str = "raw") -> torch.Tensor:
    """H(q) in nats over the last axis; norm 'support' divides by log |supp q|, 'vocab' by log V."""
    return normalised_entropy(-(q * q.clamp_min(1e-30).log()).sum(-1), q, norm)


def entropies(q: torch.Tensor, norm: str) -> tuple[float, float]:
    """(H(q), H(q) normalised by `norm`) of one law (V,), H computed once."""
    h = entropy(q)
    return float(h), float(normalised_entropy(h, q, norm))


def normalised_entropy(h: torch.Tensor, q: torch.Tensor, norm: str) -> torch.Tensor:
    """H(q) (already computed) normalised as `entropy` does."""
    if norm == "raw":
        return h
    if norm == "vocab":
        return h / math.log(q.shape[-1])
    support = (q > 0).sum(-1).float()
    return torch.where(support > 1, h / support.clamp_min(2).log(), torch.zeros_like(h))


def tv(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Total variation 0.5 * sum |p - q| over the last axis."""
    return 0.5 * (p - q).abs().sum(-1)


def safe_norm(f: torch.Tensor, fallback: torch.Tensor, eps: float = 1e-12) -> tuple[torch.Tensor, torch.Tensor]:
    """Normalise rows of a non-negative f; rows with mass < eps take `fallback` instead (pitfall 1).
    Returns (law, used_fallback bool per row)."""
    mass = f.sum(-1, keepdim=True)
    empty = mass < eps
    return torch.where(empty, fallback, f / mass.clamp_min(eps)), empty.squeeze(-1)


def sample(probs: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """One draw per row by inverse CDF with one uniform per row: (..., V) -> (...) long."""
    cdf = probs.cumsum(-1)
    u = torch.rand(cdf.shape[:-1] + (1,), generator=gen) * cdf[..., -1:]
    return torch.searchsorted(cdf, u, right=True).squeeze(-1).clamp_max(probs.shape[-1] - 1)
