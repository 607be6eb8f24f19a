"""Acceptance rules as pure functions (docs/methods.md §1; each rule's own section is named in its docstring).

Every rule returns an *acceptance function* a(y) over the whole vocabulary for each judged slot: the probability
that a draft equal to y would be accepted. Rows are slots, so `p_target` (q), `p_draft` (p) are (L, V) float32 laws
and the result is (L, V). One shared `judge` then reads a(x) at the drafted token, decides with the given uniforms,
resamples a rejected slot from a residual, and records the exact per-token relaxation cost TV(o, q) of the slot's
output law o = p·a + (1 - Σ p·a)·norm(residual).

The residual protocol: a rule may carry its own residual as an attribute of its acceptance function
(`accept_fn.residual`), a callable (q (L,V), p (L,V), a (L,V), x (L,)) -> (L,V) non-negative unnormalised mass.
Without one the TV-optimal residual [q - p·a]+ is used (docs/methods.md §1.2), whose cost is Σ [p·a - q]+.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from specviz.core.sampling import exact_at, point_masses, safe_norm, tv
from specviz.engine.gsd_sorted import member_d2, ours_sorted, released_d2

Residual = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
_CHUNK_FLOATS = 1 << 24                 # GSD distance work per chunk: cells x window x dims <= 16M floats
_SORTED_FROM = 8                        # GSD "ours": the sorted-space path once >= 1/8 of the cells are judged


def lossless(p_target: torch.Tensor, p_draft: torch.Tensor) -> torch.Tensor:
    """§1.1: a(y) = min(1, q(y)/p(y)) (exact_at); cells the draft never proposes (p = 0) get 1 (irrelevant)."""
    return exact_at(p_draft, p_target, off=1.0)


def _lossless_at(p_target: torch.Tensor, p_draft: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """lossless(q, p)[rows, x] from the two cells alone, to the same bits: (L,)."""
    rows = torch.arange(len(x), device=x.device)
    px = p_draft[rows, x]
    return exact_at(px, p_target[rows, x], off=1.0)


lossless.at = _lossless_at             # a rule's value at the drafts alone (accept_at), without its (L, V) rows


def accept_at(accept_fn, p_target: torch.Tensor, p_draft: torch.Tensor,
              x: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor]:
    """(a (L, V) or None, b = a[rows, x] (L,)): a rule with an `at` attribute gives b from the drafted cells alone
    (a None: the caller builds the rows it needs), any other rule its full rows once."""
    at = getattr(accept_fn, "at", None)
    if at is not None:
        return None, at(p_target, p_draft, x)
    a = accept_fn(p_target, p_draft)
    return a, a[torch.arange(len(x), device=x.device), x]


# ------------------------------------------------------------------------------------------------------------ CSD
def csd(p_target: torch.Tensor, p_draft: torch.Tensor, relax: torch.Tensor, tv_pq: torch.Tensor,
        delta: float) -> torch.Tensor:
    """CSD (§3): a(y) = min(1, q(y)/p(y) + relax) where TV(p, q) < delta, else lossless.
    relax (L,) = lambda * g(H(q)) is computed by the caller (entropy normalisation and g are options)."""
    gate = (tv_pq < delta).float() * relax                                            # (L,)
    return (p_target / p_draft.clamp_min(1e-30) + gate[:, None]).clamp_(max=1.0).masked_fill_(p_draft <= 0, 1.0)


def csd_at(p_target: torch.Tensor, p_draft: torch.Tensor, x: torch.Tensor, relax: torch.Tensor, tv_pq: torch.Tensor,
           delta: float) -> torch.Tensor:
    """csd(...)[rows, x] from the drafted cells and the rows' relax and TV alone, to the same bits: (L,)."""
    rows = torch.arange(len(x), device=x.device)
    px, qx = p_draft[rows, x], p_target[rows, x]
    gate = (tv_pq < delta).float() * relax
    return (qx / px.clamp_min(1e-30) + gate).clamp_(max=1.0).masked_fill_(px <= 0, 1.0)


def csd_g(h_norm, shape: str):
    """CSD's relaxation shape g(H) on the normalised entropy (a float, or a tensor of them): H, or 1 - H floored
    at 0 (knob `g`: "h" | "one_minus_h"). The rule, its promised bound, the preview and the inspector all use this."""
    if shape != "one_minus_h":
        return h_norm
    rest = 1 - h_norm
    return rest.clamp_min(0) if isinstance(rest, torch.Tensor) else max(0.0, rest)


# ------------------------------------------------------------------------------------------------------------ GSD
def gsd(p_target: torch.Tensor, p_draft: torch.Tensor, vectors: torch.Tensor, group: int, gap: float,
        dist: float, mode: str = "ours") -> torch.Tensor:
    """GSD (§4). y's window W(y) is a set of distinct tokens next to y in the target's ranking; a member z is kept
    if |q(z) - q(y)| < gap and ||e_z - e_y||^2 < dist (e = `vectors` (V, d)); a(y) = min(1, Σ_K q / Σ_K p).

    mode "ours": W(y) = the `group` tokens nearest y in the descending ranking (G//2 above when possible; the
    window slides at the ends, so it always holds min(G, V) distinct tokens); y itself is always kept.
    mode "released" (junhyukso/GSD scheduler/jacobi_iteration_lumina_mgpt.py:305-337): ascending stable sort,
    W(y) = sorted[r - G//2 : r + G - G//2] with Python slice semantics (a negative start wraps, which empties the
    slice when V >= G); an empty window falls back to min(1, q(y)/p(y)); y is kept only if it passes the filters
    itself; Σ_K p = 0 gives inf (-> 1) or NaN (-> never accepted, a = 0).
    Computed only where p(y) > 0 (elsewhere a = 1, irrelevant)."""
    L, V = p_target.shape
    out = torch.ones_like(p_target)
    rows, ys = (p_draft > 0).nonzero(as_tuple=True)                                   # judged cells only
    if len(rows) == 0:
        return out
    if mode == "ours" and len(rows) * _SORTED_FROM >= L * V:
        return ours_sorted(p_target, p_draft, vectors.float(), group, gap, dist)     # most cells judged: vectorised
    order = p_target.argsort(dim=-1, descending=(mode == "ours"), stable=True)           # (L, V) ids by rank
    rank = torch.empty_like(order).scatter_(-1, order, torch.arange(V, device=order.device).expand(L, V))
    r = rank[rows, ys]
    lo, hi = _gsd_window(r, V, group, mode)                                          # (n,) each
    width = min(group, V) if mode == "ours" else max(1, int((hi - lo).max()))       # ours: every window's width
    pos = lo[:, None] + torch.arange(width, device=lo.device)                         # (n, W) sorted positions
    inside = pos < hi[:, None]
    pos = pos.clamp(max=V - 1)
    d2 = (member_d2(vectors.float(), order, rows, r, pos, _CHUNK_FLOATS) if mode == "ours" else
          released_d2(vectors.float(), order, rows, r, pos, inside, _CHUNK_FLOATS))
    out[rows, ys] = _gsd_ratio(p_target, p_draft, order, rows, ys, pos, inside, d2, gap, dist, mode)
    return out


def _gsd_window(r: torch.Tensor, V: int, group: int, mode: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Window [lo, hi) of positions in the sorted order for draft ranks r (n,)."""
    if mode == "ours":
        lo = (r - group // 2).clamp(0, max(0, V - group))
        return lo, (lo + group).clamp(max=V)
    start, stop = r - group // 2, (r + group - group // 2).clamp(max=V)
    start = torch.where(start < 0, (start + V).clamp(min=0), start)                  # Python slice semantics
    return start, torch.maximum(stop, start)


def _gsd_ratio(q, p, order, rows, ys, pos, inside, d2, gap, dist, mode) -> torch.Tensor:
    z = order[rows[:, None], pos]                                                     # (n, W) member ids
    qz, qy = q[rows[:, None], z], q[rows, ys][:, None]
    keep = inside & ((qz - qy).abs() < gap) & (d2 < dist)
    if mode == "ours":
        keep &= z != ys[:, None]
        num = qy[:, 0] + (qz * keep).sum(-1)
        den = p[rows, ys] + (p[rows[:, None], z] * keep).sum(-1)
        return (num / den).clamp(max=1.0)
    num, den = (qz * keep).sum(-1), (p[rows[:, None], z] * keep).sum(-1)
    ratio = (num / den).clamp(max=1.0).nan_to_num(nan=0.0)
    fallback = (q[rows, ys] / p[rows, ys]).clamp(max=1.0)
    return torch.where(inside.any(-1), ratio, fallback)


def plain_residual(q: torch.Tensor, p: torch.Tensor, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """[q - p]+: the released GSD / SJD residual (not TV-optimal when a < min(1, q/p) somewhere)."""
    return (q - p).clamp_min(0)


# ------------------------------------------------------------------------------------------------------ LANTERN(++)
def lantern_mass(p_target: torch.Tensor, neighbours: torch.Tensor, k: int, budget) -> torch.Tensor:
    """LANTERN (§5): q~(y) = q(y) + s_m*(y), where s_m(y) = Σ of q over y's m nearest codes and
    m* = max{m <= k : s_m <= B(y)} (none: q~(y) = q(y)). neighbours (V, K >= k): code ids sorted by codebook
    distance, self excluded. budget B: a float (LANTERN's additive δ) or an (L, V) tensor (LANTERN++:
    (λ - 1)·q(y), §6). Returns q~ (L, V)."""
    cs = p_target[:, neighbours[:, :k]].cumsum(-1)                                    # (L, V, k)
    b = budget[..., None] if torch.is_tensor(budget) else budget
    moved = torch.where(cs <= b, cs, torch.zeros_like(cs)).amax(-1)
    return p_target + moved


def lantern_budget(p_target: torch.Tensor, delta: float, lam: float | None = None):
    """B(y): δ for LANTERN, (λ - 1)·q(y) for LANTERN++ (λ given)."""
    return delta if lam is None else (lam - 1.0) * p_target


def lantern(p_target: torch.Tensor, p_draft: torch.Tensor, neighbours: torch.Tensor, k: int,
            budget) -> torch.Tensor:
    """a(y) = min(1, q~(y)/p(y)) (§5.2; released: ea_model_llamagen.py:620-640, acp = px / qx with px the
    relaxed target, qx the draft probability): a draft borrows at most B(y) of target mass from its neighbours.
    Few judged cells (point masses: a tree's siblings): q~ is computed on those cells and their neighbours only."""
    rows, ys = (p_draft > 0).nonzero(as_tuple=True)
    if len(ys) * _SORTED_FROM >= p_draft.numel():
        return lossless(lantern_mass(p_target, neighbours, k, budget), p_draft)
    mass = _lantern_cells(p_target, rows, ys, neighbours, k, budget[rows, ys] if torch.is_tensor(budget) else budget)
    out = torch.ones_like(p_draft)
    out[rows, ys] = exact_at(p_draft[rows, ys], mass)                               # lossless at the cells
    return out


def lantern_at(p_target: torch.Tensor, p_draft: torch.Tensor, x: torch.Tensor, neighbours: torch.Tensor, k: int,
               budget_fn: Callable) -> torch.Tensor:
    """lantern(q, p, neighbours, k, budget_fn(q))[rows, x] from each draft's cell and its k neighbours alone, to the
    same bits (budget_fn is elementwise, lantern_budget): (L,), 1 where p(x) = 0 as in lantern's rows."""
    rows = torch.arange(len(x), device=x.device)
    qx, px = p_target[rows, x], p_draft[rows, x]
    mass = _lantern_cells(p_target, rows, x, neighbours, k, budget_fn(qx), qx)
    return exact_at(px, mass, off=1.0)


def _lantern_cells(q, rows, ys, neighbours, k, b, qy=None) -> torch.Tensor:
    """lantern_mass at cells (rows, ys) from their k neighbours alone (n,), the same bits; b: B there or a float."""
    cs = q[rows[:, None], neighbours[ys, :k]].cumsum(-1)                              # (n, k)
    moved = torch.where(cs <= (b[:, None] if torch.is_tensor(b) else b), cs, torch.zeros_like(cs)).amax(-1)
    return (q[rows, ys] if qy is None else qy) + moved


def lantern_residual(neighbours: torch.Tensor, k: int, budget_fn: Callable, variant: str) -> Residual:
    """The released code's resampling after a rejected draft x (§5.3), for the residual protocol. "Aggregated" means
    s_1(x) <= B(x) (the released `indices != -1`); then N(x) = x's k+1 nearest codes (`nearest_latents[x, :k+1]`) is
    zeroed:
      "lumina"  (ea_model_lumina_mgpt.py:704-712): in the target, then [q·1{∉N} - p]+ (a point-mass draft: q with
                x zeroed, the EAGLE-2 path);
      "llamagen" (ea_model_llamagen.py:646-656 EAGLE-1): in the draft law, [q - p·1{∉N}]+; for a point-mass draft
                 the EAGLE-2 path (ea_model_llamagen.py:769-774) zeroes x and N in the target, as "lumina".
    An all-zero result becomes uniform over the vocabulary (ones), as released. The result depends on x
    (`residual.per_draft`), so judge's cost sums the output law over every draft the law could have drawn."""
    def residual(q: torch.Tensor, p: torch.Tensor, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        rows = torch.arange(len(x), device=q.device)
        b = budget_fn(q)
        bx = b[rows, x] if torch.is_tensor(b) else torch.full((len(x),), float(b), device=q.device)
        nbr = neighbours[x, :k + 1]                                                  # (L, k+1)
        agg = q[rows, neighbours[x, 0]] <= bx                                        # (L,)
        drop = torch.zeros_like(q, dtype=torch.bool).index_put_((rows[:, None], nbr), agg[:, None])
        point = p[rows, x] >= 1.0
        on_target = (variant == "lumina") | point                                     # (L,)
        keep = (~drop).float()
        mass = torch.where(on_target[:, None], (q * keep - p).clamp_min(0), (q - p * keep).clamp_min(0))
        empty = mass.sum(-1, keepdim=True) <= 0
        return torch.where(empty, torch.ones_like(mass), mass)
    residual.per_draft = True
    return residual


def cascade(p_target: torch.Tensor, p_draft: torch.Tensor, x: int, group_tokens: list[int],
            scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor | float]:
    """CASCADE (docs/design.md §3) for one candidate x at one slot: p_target (V,) is the law the candidate is judged
    against (q, or the running residual for later siblings), p_draft (V,) the law x was drawn from.
    q_R(x) = q(x) + s · Σ_{t ∈ T} q(t), T = the distinct tokens of the group I(n) ∪ C(n) other than x (each once;
    q is the law at x's position evaluated at the member's token); a(x) = min(1, q_R(x)/p(x)); every other cell
    lossless. s in [0, 1] is the level's budget factor (verify.fit_level). Returns (a (V,), extra mass s·Σ q(t): a
    0-d tensor where q lives, not read; 0.0 without a group)."""
    a = lossless(p_target[None], p_draft[None])[0]
    toks = sorted(set(group_tokens) - {x})
    if not toks:
        return a, 0.0
    extra = scale * p_target[toks].sum()
    a[x] = torch.where((extra > 0) & (p_draft[x] > 0), ((p_target[x] + extra) / p_draft[x]).clamp(max=1.0), a[x])
    return a, extra


@dataclass(frozen=True)
class Judgement:
    """Vectorised over L slots."""
    accept_prob: torch.Tensor       # (L,) b = a(x)
    exact_prob: torch.Tensor        # (L,) min(1, q(x)/p(x))
    accepted: torch.Tensor          # (L,) bool, u < b
    relaxed: torch.Tensor           # (L,) bool, accepted only because of the relaxation
    tv_cost: torch.Tensor           # (L,) TV(o, q) of the slot's output law o
    residual: torch.Tensor          # (L, V) the normalised residual law, q where empty
    empty_residual: torch.Tensor    # (L,) bool
    p_x: torch.Tensor | None = None    # (L,) p(x) and q(x) at the drafts, for the step's record (not gathered again)
    q_x: torch.Tensor | None = None


def judge(p_target: torch.Tensor, p_draft: torch.Tensor, accept: torch.Tensor, x: torch.Tensor,
          u: torch.Tensor, residual: Residual | None = None, b: torch.Tensor | None = None) -> Judgement:
    """Decide L drafts x (L,) with uniforms u (L,) under acceptance functions accept (L, V) (§1.2).
    residual: None for the TV-optimal [q - p·a]+, whose cost TV(o, q) = Σ [p·a - q]+ (P4); else a callable
    (q, p, a, x) -> (L, V) unnormalised mass, and the cost is TV(o, q) of o = p·a + (1 - Σ p·a)·norm(residual).
    b: accept at the drafts when the caller has it (a rule's `at`: the same bits), else read off accept's rows."""
    rows = torch.arange(len(x), device=x.device)
    b = accept[rows, x] if b is None else b
    px, qx = p_draft[rows, x], p_target[rows, x]
    exact = exact_at(px, qx)
    ok = u < b
    pa = p_draft * accept
    if residual is None:
        res, empty = safe_norm((p_target - pa).clamp_min_(0), p_target)       # in place: fresh differences
        cost = (pa - p_target).clamp_min_(0).sum(-1)
    else:
        res, empty = safe_norm(residual(p_target, p_draft, accept, x), p_target)
        cost = tv(pa + rejected_mass(p_target, p_draft, accept, x, residual, res), p_target)
    return Judgement(b, exact, ok, ok & (u >= exact), cost, res, empty, px, qx)


def rejected_mass(q, p, a, x, residual: Residual, res: torch.Tensor) -> torch.Tensor:
    """Σ_z p(z)(1 - a(z))·norm(residual given draft z) (L, V): the part of the output law reached by rejection.
    A residual that does not depend on the drafted token (no `per_draft` attribute) gives (1 - Σ p·a)·res; one that
    does (LANTERN's released zeroing) is evaluated for every z in supp p, in chunks."""
    if not getattr(residual, "per_draft", False):
        return (1 - (p * a).sum(-1, keepdim=True)).clamp_min(0) * res
    out = torch.zeros_like(q)
    chunk = max(1, _CHUNK_FLOATS // (4 * q.shape[-1]))
    for row in range(len(x)):
        zs = p[row].nonzero().squeeze(-1)
        for s in range(0, len(zs), chunk):
            z = zs[s:s + chunk]
            n = len(z)
            qr, pr, ar = q[row].expand(n, -1), p[row].expand(n, -1), a[row].expand(n, -1)
            law, _ = safe_norm(residual(qr, pr, ar, z), qr)
            w = p[row, z] * (1 - a[row, z])
            out[row] += (w[:, None] * law).sum(0)
    return out


def point_mass(x: torch.Tensor, vocab: int) -> torch.Tensor:
    """(L,) tokens -> (L, V) one-hot draft laws (P2: exact for drafts independent of the verifier's randomness)."""
    return point_masses(x, vocab)
