"""Point-mass levels: a level whose siblings are distinct point masses (EAGLE-2 and static trees, the stub's) needs
the V-wide work of its laws only, not of its one-hot draft rows. These helpers give such a level's numbers from the
siblings' cells: the same bits as the row-wise code where a decision or a drawn token depends on them (CASCADE's
acceptance, verify.point_tensors), and TV / coupling values that differ from the row-wise sums by float rounding
alone (recorded numbers, no decision reads them)."""
from __future__ import annotations

import torch

from specviz.engine import rules


def points(tree, kids: list) -> bool:
    """Whether the kids are distinct point masses: no recorded law (their draft law is the one-hot at their token,
    verify.kid_laws) and no token twice."""
    toks = [tree.tokens[c] for c in kids]
    return bool(kids) and all(tree.laws[c] is None for c in kids) and len(set(toks)) == len(toks)


def cascade_cell(r: torch.Tensor, p: torch.Tensor, x: int, members: list, scale: float):
    """rules.cascade's (a(x), extra) for candidate x judged against r (V,) with group tokens `members`, from the
    cells x and the members alone: the rule on that small vocabulary (ids kept in order, so its sorted member sum
    adds the same values in the same order), to the same bits as its full row at x."""
    cells = sorted({x, *members})
    at = {t: i for i, t in enumerate(cells)}
    idx = torch.tensor(cells, device=r.device)
    a, extra = rules.cascade(r[idx], p[idx], at[x], [at[m] for m in members], scale)
    return a[at[x]], extra


def point_tvs(law: torch.Tensor, lx: torch.Tensor) -> torch.Tensor:
    """TV(δ_x, law) for point masses at tokens whose law values are lx (k,): ½ (Σ law - law(x) + |1 - law(x)|),
    the row-wise ½ Σ |δ_x - law| with the sum taken once."""
    return 0.5 * ((law.sum() - lx) + (1.0 - lx).abs())


def point_tvs_each(targets: list, xs: list, lx: torch.Tensor | None = None) -> torch.Tensor:
    """TV(δ_{x_j}, targets[j]) for each sibling j (its own law, e.g. the running residual it was judged against);
    lx: targets[j](x_j) (k,) when the caller has them (verify.Level.cells)."""
    lx = torch.stack([t[x] for t, x in zip(targets, xs)]) if lx is None else lx
    return 0.5 * ((torch.stack([t.sum() for t in targets]) - lx) + (1.0 - lx).abs())


def point_coupled(law: torch.Tensor, lx: torch.Tensor) -> torch.Tensor:
    """sampling.coupled_accept of point masses at tokens with law values lx (k,): J_x/p_x = 1 / Σ_v max(δ_x(v),
    law(v)/law(x)) = 1 / (1 + (Σ law - law(x)) / law(x)), 0 where law(x) = 0."""
    s = 1.0 + (law.sum() - lx) / lx.clamp_min(1e-38)
    return torch.where(lx > 0, (1.0 / s).clamp(max=1.0), torch.zeros_like(lx))
