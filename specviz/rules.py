"""Acceptance rules as pure functions (algorithms.md §2, §5-8).

Every rule returns an *acceptance function* a(y) over the whole vocabulary for each judged slot: the probability
that a draft equal to y would be accepted. Rows are slots, so `p_target`, `p_draft` are (L, V) float32 laws and the
result is (L, V). One shared `judge` then reads a(x) at the drafted token, decides with the given uniforms, and
computes the TV-optimal residual norm([q - p·a]+) (P4) and the exact per-token relaxation cost
TV(o, q) = sum [p·a - q]+ of the output law o = p·a + (1 - sum p·a)·residual.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.sampling import safe_norm


def lossless(p_target: torch.Tensor, p_draft: torch.Tensor) -> torch.Tensor:
    """P1 / P2: a(y) = min(1, q(y)/p(y)); cells the draft never proposes (p = 0) get 1 (irrelevant)."""
    return torch.where(p_draft > 0, (p_target / p_draft.clamp_min(1e-30)).clamp(max=1.0), torch.ones_like(p_draft))


def csd(p_target: torch.Tensor, p_draft: torch.Tensor, relax: torch.Tensor, tv_pq: torch.Tensor,
        delta: float) -> torch.Tensor:
    """CSD (§7): a(y) = min(1, q(y)/p(y) + relax) where TV(p, q) < delta, else lossless.
    relax (L,) = lambda * g(H(q)) is computed by the caller (entropy normalisation and g are options)."""
    gate = (tv_pq < delta).float() * relax                                            # (L,)
    ratio = torch.where(p_draft > 0, p_target / p_draft.clamp_min(1e-30), torch.zeros_like(p_draft))
    a = (ratio + gate[:, None]).clamp(max=1.0)
    return torch.where(p_draft > 0, a, torch.ones_like(a))


def lantern_mass(p_target: torch.Tensor, neighbours: torch.Tensor, k: int, delta: float) -> torch.Tensor:
    """LANTERN (§5): q~(y) = q(y) + s_m*(y), where s_m(y) = sum of q over y's m nearest codes and
    m* = max{m <= k : s_m <= delta}. neighbours (V, K): code ids sorted by codebook distance, self excluded.
    Returns q~ (L, V)."""
    cs = p_target[:, neighbours[:, :k]].cumsum(-1)                                    # (L, V, k)
    moved = torch.where(cs <= delta, cs, torch.zeros_like(cs)).amax(-1)
    return p_target + moved


def lantern(p_target: torch.Tensor, p_draft: torch.Tensor, neighbours: torch.Tensor, k: int,
            delta: float) -> torch.Tensor:
    """a(y) = min(1, q~(y)/p(y)): a draft borrows at most delta of target mass from its latent neighbours."""
    return lossless(lantern_mass(p_target, neighbours, k, delta), p_draft)


def gsd(p_target: torch.Tensor, p_draft: torch.Tensor, code_vectors: torch.Tensor, group: int, gap: float,
        dist: float) -> torch.Tensor:
    """GSD (§6, released-code reading): y's group = the `group` tokens around y in the target's probability
    ranking, kept if |q(z) - q(y)| < gap and ||e_z - e_y||^2 < dist; a(y) = min(1, sum_G q / sum_G p).
    Computed only for y in the draft's support (elsewhere a = 1, irrelevant)."""
    L, V = p_target.shape
    order = p_target.argsort(-1, descending=True)                                     # (L, V) ids by rank
    rank = torch.empty_like(order).scatter_(-1, order, torch.arange(V).expand(L, V))
    out = torch.ones_like(p_target)
    rows, ys = (p_draft > 0).nonzero(as_tuple=True)                                   # judged cells only
    if len(rows) == 0:
        return out
    offs = torch.arange(group) - group // 2
    r = (rank[rows, ys][:, None] + offs).clamp(0, V - 1)                              # (n, G)
    z = order[rows[:, None], r]                                                       # (n, G)
    qz, qy = p_target[rows[:, None], z], p_target[rows, ys][:, None]
    d2 = (code_vectors[z] - code_vectors[ys][:, None]).pow(2).sum(-1)
    keep = ((qz - qy).abs() < gap) & (d2 < dist) & (z != ys[:, None])
    num = qy[:, 0] + (qz * keep).sum(-1)
    den = p_draft[rows, ys] + (p_draft[rows[:, None], z] * keep).sum(-1)
    out[rows, ys] = (num / den).clamp(max=1.0)
    return out


def cascade(p_target: torch.Tensor, p_draft: torch.Tensor, x: int, group_tokens: list[int],
            scale: float = 1.0) -> tuple[torch.Tensor, float]:
    """CASCADE (design.md §3) for one candidate x at one slot: p_target (V,) is the law the candidate is judged
    against (q, or the running residual for later siblings), p_draft (V,) the law x was drawn from.
    q_R(x) = q(x) + s · Σ_{t ∈ T} q(t), T = the distinct tokens of the group I(n) ∪ C(n) other than x (each once;
    q is the law at x's position evaluated at the member's token); a(x) = min(1, q_R(x)/p(x)); every other cell
    lossless. s in [0, 1] is the level's budget factor (verify.fit_level). Returns (a (V,), extra mass s·Σ q(t))."""
    a = lossless(p_target[None], p_draft[None])[0]
    toks = sorted(set(group_tokens) - {x})
    extra = scale * float(p_target[toks].sum()) if toks else 0.0
    if extra > 0 and p_draft[x] > 0:
        a[x] = min(1.0, float((p_target[x] + extra) / p_draft[x]))
    return a, extra


@dataclass(frozen=True)
class Judgement:
    """Vectorised over L slots."""
    accept_prob: torch.Tensor       # (L,) b = a(x)
    exact_prob: torch.Tensor        # (L,) min(1, q(x)/p(x))
    accepted: torch.Tensor          # (L,) bool, u < b
    relaxed: torch.Tensor           # (L,) bool, accepted only because of the relaxation
    tv_cost: torch.Tensor           # (L,) sum [p·a - q]+
    residual: torch.Tensor          # (L, V) norm([q - p·a]+), q where empty
    empty_residual: torch.Tensor    # (L,) bool


def judge(p_target: torch.Tensor, p_draft: torch.Tensor, accept: torch.Tensor, x: torch.Tensor,
          u: torch.Tensor, residual=None) -> Judgement:
    """Decide L drafts x (L,) with uniforms u (L,) under acceptance functions accept (L, V).
    residual: optional (q (L,V), p (L,V), a (L,V), x (L,)) -> (L,V) unnormalised residual mass (default [q - p·a]+);
    with one, tv_cost is TV(o, q) of the true output law o = p·a + (1 - Σ p·a)·norm(residual)."""
    rows = torch.arange(len(x))
    b = accept[rows, x]
    px, qx = p_draft[rows, x], p_target[rows, x]
    exact = torch.where(px > 0, (qx / px.clamp_min(1e-30)).clamp(max=1.0), torch.zeros_like(px))
    ok = u < b
    pa = p_draft * accept
    rest = (p_target - pa).clamp_min(0) if residual is None else residual(p_target, p_draft, accept, x)
    law, empty = safe_norm(rest, p_target)
    if residual is None:
        cost = (pa - p_target).clamp_min(0).sum(-1)
    else:
        cost = 0.5 * (pa + (1 - pa.sum(-1, keepdim=True)).clamp_min(0) * law - p_target).abs().sum(-1)
    return Judgement(b, exact, ok, ok & (u >= exact), cost, law, empty)


def point_mass(x: torch.Tensor, vocab: int) -> torch.Tensor:
    """(L,) tokens -> (L, V) one-hot draft laws (P2: exact for drafts independent of the verifier's randomness)."""
    return torch.nn.functional.one_hot(x, vocab).float()
