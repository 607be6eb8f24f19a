"""The rules' promised costs (docs/methods.md §3.3, §5.4), written out for the tests that hold each rule to its bound:
oracles, not the rules themselves, so they live with the tests (specviz/engine/rules.py keeps only what decodes)."""
from __future__ import annotations

import torch

from specviz.core.sampling import tv
from specviz.engine.rules import lantern_mass


def csd_promise(p_target: torch.Tensor, p_draft: torch.Tensor, relax: torch.Tensor, delta: float) -> torch.Tensor:
    """CSD's per-token bound (§3.3): min(TV(p, q), relax) where TV(p, q) < delta, else 0. (L,)."""
    d = tv(p_draft, p_target)
    return torch.where(d < delta, torch.minimum(d, relax), torch.zeros_like(d))


def lantern_promise(p_target: torch.Tensor, p_draft: torch.Tensor, neighbours: torch.Tensor, k: int,
                    budget) -> torch.Tensor:
    """The TV-optimal residual's exact cost for a single draft, Σ_y min([p(y) - q(y)]+, q~(y) - q(y)) (§5.4), which
    is <= B(x) for a point-mass draft x and <= min(TV(p, q), Σ_{p > q} B) in general. (L,)."""
    moved = lantern_mass(p_target, neighbours, k, budget) - p_target
    return torch.minimum((p_draft - p_target).clamp_min(0), moved).sum(-1)
