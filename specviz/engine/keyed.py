"""Keyed noise (docs/methods.md §9): verification when every random number is keyed by (seed, position, purpose).

The target's sample at position i given the verified prefix is the race x*_i = race(q_i, E_i) (core.sampling), so
AR's image is a function of the seed alone. A lossless rule accepts a draft iff it equals x*_i and otherwise commits
x*_i; a tree walks into the child equal to x*_i. A relaxed rule with acceptance b and lossless part e = min(1, q/p)
also accepts a draft that misses x*_i, with probability c = (b - e)/(1 - e) on its own keyed uniform, and otherwise
commits x*_i, so only the relaxation's excess can change the image. The recorded per-token cost is P(committed token
!= x*_i), an upper bound on TV(o, q) that is exact for point-mass drafts (a chain slot: change_prob; a level of
point-mass siblings: (1 - Σ_K q)(1 - Π_j (1 - c_j))); `coupled` records J_x/p_x beside min(1, q/p).
"""
from __future__ import annotations

import torch

from specviz.core.noise import Noise
from specviz.core.sampling import change_prob, coupled_accept, relax_excess, tv
from specviz.engine import rules
from specviz.engine.drafters.draft_tree import DraftTree
from specviz.engine.groups import CandidateGroup
from specviz.engine.verify import ChainResult, Level, TreeStep, TreeWalk, fit_level, kid_laws, settled


def _exact(p: torch.Tensor, q: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    rows = torch.arange(len(x), device=x.device)
    px, qx = p[rows, x], q[rows, x]
    return torch.where(px > 0, (qx / px.clamp_min(1e-30)).clamp(max=1.0), torch.zeros_like(px))


def keyed_chain(q: torch.Tensor, p: torch.Tensor, x: torch.Tensor, accept_fn, noise: Noise, n: int,
                bonus_ok: bool, lazy: bool = False, tokens: list | None = None,
                lossless: bool = False) -> ChainResult:
    """verify_chain under keyed noise: drafts x (k,) at positions n, n+1, ...; q (k+1, V); p (k, V).
    tokens: x as host ints when the caller knows them (else read here); lossless: the rule is min(1, q/p), so no
    slot has a relaxation's uniform to draw. The accepted count is the one value read; lazy: see verify.settled."""
    k = len(x)
    if k == 0:
        res = ChainResult(0, noise.races(n, q[:1])[0], True, 0, None, None, [], [])
        return res if lazy else settled(res)
    a = accept_fn(q[:k], p)
    rows = torch.arange(k, device=q.device)
    b, e = a[rows, x], _exact(p, q[:k], x)
    c = relax_excess(b, e)
    star = noise.races(n, q[:k])
    if lossless:
        u = torch.full((k,), -1.0, device=q.device)
    else:
        u = torch.where(c > 0, noise.accept_us(n, x), -1.0)          # one block where x lives (no read of x)
    hit = x == star
    ok = hit | ((c > 0) & (u < c))
    if lossless:                                   # c = 0 on every cell: change_prob's sum is 0 (no row to loop)
        cost = torch.zeros(k, device=q.device)
    else:
        cost, _ = change_prob(p, q[:k], relax_excess(a, rules.lossless(q[:k], p)))
    jd = rules.Judgement(b, e, ok, ok & ~hit, cost, q[:k], torch.zeros(k, dtype=torch.bool, device=q.device))
    m = int(ok.long().cumprod(0).sum())
    extra = (coupled_accept(p, q[:k], x), star)
    if m < k:
        res = ChainResult(m, star[m], False, m + 1, jd, u, *extra)
    else:
        res = ChainResult(k, noise.races(n + k, q[k:k + 1])[0] if bonus_ok else -1, bonus_ok, k, jd, u, *extra)
    return res if lazy else settled(res)


def level_cost(q: torch.Tensor, laws: list, xs: list, a: torch.Tensor) -> float:
    """P(a level's committed token != x*) for siblings xs with draft laws `laws` and acceptance rows a (k, V) against
    q (V,): exact (1 - Σ_K q)(1 - Π_j (1 - c_j)) for distinct point-mass siblings, else the bound 1 - Π_j (1 - max
    c_j over supp p_j)."""
    p = torch.stack(laws)
    c_rows = relax_excess(a, rules.lossless(q[None].expand_as(p), p))
    point = all(float(law.max()) >= 1.0 for law in laws) and len(set(xs)) == len(xs)
    if point:
        cj = c_rows[torch.arange(len(xs)), torch.tensor(xs)]
        miss = 1.0 - float(q[torch.tensor(xs)].sum())
    else:
        cj = torch.where(p > 0, c_rows, torch.zeros_like(c_rows)).amax(-1)
        miss = 1.0
    return max(0.0, miss) * (1.0 - float(torch.prod(1 - cj)))


def _level(q, laws, xs, accept_rows) -> Level:
    a, extras = accept_rows
    rows = torch.arange(len(xs))
    p = torch.stack(laws)
    b = a[rows, torch.tensor(xs)].tolist()
    ex = _exact(p, q[None].expand_as(p), torch.tensor(xs)).tolist()
    return Level(b, ex, [q] * len(xs), extras, q, q, level_cost(q, laws, xs, a))


def keyed_level(tree: DraftTree, kids: list, q_cur: torch.Tensor, laws: list, accept_fn, group_fn, left: float):
    """The level's acceptance (every sibling judged against q itself), CASCADE's scale fitted so its keyed cost
    stays within `left`. Returns (Level, per-kid CandidateGroup)."""
    xs = [tree.tokens[c] for c in kids]
    if group_fn is None:
        a = accept_fn(q_cur[None].expand(len(kids), -1), torch.stack(laws))
        return _level(q_cur, laws, xs, (a, [0.0] * len(kids))), [CandidateGroup() for _ in kids]
    groups = [group_fn(c, kids) for c in kids]
    toks = [[tree.tokens[m] for m in g.members] for g in groups]

    def build(s: float) -> Level:
        rows = [rules.cascade(q_cur, p, x, t, s) for p, x, t in zip(laws, xs, toks)]
        lvl = _level(q_cur, laws, xs, (torch.stack([r[0] for r in rows]), [r[1] for r in rows]))
        lvl.scale = s
        return lvl
    return fit_level(build, left), groups


def keyed_tree(tree: DraftTree, q: torch.Tensor, accept_fn, noise: Noise, root_pos: int, group_fn, budget: float,
               bonus_ok) -> TreeWalk:
    """verify_tree under keyed noise: at each node walk into the child equal to x* (the race of q at the children's
    position); a relaxed rule, when no child equals x*, accepts the first sibling whose keyed uniform is below its c."""
    path, steps, used = [0], [], 0.0
    while True:
        cur = path[-1]
        kids, pos = tree.children[cur], root_pos + tree.depths[cur] + 1
        q_cur, laws = q[cur], kid_laws(tree, kids, q.shape[1])
        star = noise.race(pos, q_cur)
        left = budget - used
        lvl, groups = keyed_level(tree, kids, q_cur, laws, accept_fn, group_fn, left) if kids else (None, [])
        if group_fn is not None and lvl is not None:
            used += lvl.cost
        xs = [tree.tokens[c] for c in kids]
        hit = xs.index(star) if star in xs else -1
        chosen = None
        for j, c in enumerate(kids):
            b, e = lvl.b[j], lvl.exact[j]
            cj = float(relax_excess(torch.tensor(b), torch.tensor(e)))
            u = noise.u(pos, xs[j]) if hit < 0 and cj > 0 else -1.0
            ok = j == hit if hit >= 0 else (cj > 0 and u < cj)
            p_c = laws[j]
            relaxed = ok and j != hit
            extra = 0.0
            if relaxed:
                extra = lvl.extras[j] if group_fn is not None else max(0.0, float(p_c[xs[j]]) * b - float(q_cur[xs[j]]))
            d = float(tv(p_c, q_cur))
            steps.append(TreeStep(node=c, level=tree.depths[c], accepted=ok, relaxed=relaxed, b=b, exact=e, u=u,
                                  p_x=p_c[xs[j]].item(), q_x=q_cur[xs[j]].item(), tv=d, tv_residual=d,
                                  tv_cost=lvl.cost, point_mass=tree.laws[c] is None, extra=extra,
                                  group=groups[j],
                                  budget_left=max(0.0, left) if group_fn is not None else 0.0, scale=lvl.scale,
                                  coupled=float(coupled_accept(p_c[None], q_cur[None], torch.tensor([xs[j]]))[0]),
                                  target_sample=star))
            if ok:
                chosen = c
                break
        if chosen is None:
            return TreeWalk(path, star, False, steps)
        path.append(chosen)
        if not tree.children[chosen]:
            if bonus_ok(len(path) - 1):
                return TreeWalk(path, noise.race(pos + 1, q[chosen]), True, steps)
            return TreeWalk(path, -1, False, steps)
