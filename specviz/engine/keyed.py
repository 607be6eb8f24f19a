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

from dataclasses import replace

import torch

from specviz.core import sampling
from specviz.core.noise import Noise
from specviz.core.sampling import change_prob, coupled_accept, entropy, normalised_entropy, relax_excess, tv
from specviz.engine import rules
from specviz.engine.budgetwalk import BudgetLevels
from specviz.engine.drafters.draft_tree import DraftTree
from specviz.engine.groups import CandidateGroup
from specviz.engine.levelpack import Ahead, bonus_part, bonus_values, cascade_full
from specviz.engine.pointlevel import point_coupled, point_tvs, points
from specviz.engine.verify import (
    ChainResult,
    Level,
    TreeStep,
    TreeWalk,
    cascade_fit,
    kid_laws,
    read_level,
    settled,
)


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
    a, b = rules.accept_at(accept_fn, q[:k], p, x)
    rows = torch.arange(k, device=q.device)
    px, qx = p[rows, x], q[rows, x]
    e = sampling.exact_at(px, qx)
    c = relax_excess(b, e)
    star_all = noise.races(n, q)                   # every row at once: the bonus slot, and the refined drafts'
    star = star_all[:k]                            # races (Keyed.refine) after this, from memory (core/rowmemo.py)
    if lossless:
        u = torch.full((k,), -1.0, device=q.device)
    else:
        u = torch.where(c > 0, noise.accept_us(n, x), -1.0)          # one block where x lives (no read of x)
    hit = x == star
    ok = hit | ((c > 0) & (u < c))
    m = int(ok.long().cumprod(0).sum())
    j = min(m + 1, k)                              # the judged slots: only they need full rows and a cost
    if lossless:                                   # c = 0 on every cell: change_prob's sum is 0
        cost = torch.zeros(j, device=q.device)
    else:
        aj = accept_fn(q[:j], p[:j]) if a is None else a[:j]
        cost, _ = change_prob(p[:j], q[:j], relax_excess(aj, rules.lossless(q[:j], p[:j])))
    jd = rules.Judgement(b, e, ok, ok & ~hit, cost, q[:k], torch.zeros(k, dtype=torch.bool, device=q.device), px, qx)
    extra = (coupled_accept(p[:j], q[:j], x[:j]), star)
    if m < k:
        res = ChainResult(m, star[m], False, m + 1, jd, u, *extra)
    else:
        res = ChainResult(k, star_all[k] if bonus_ok else -1, bonus_ok, k, jd, u, *extra)
    return res if lazy else settled(res)


def level_cost(q: torch.Tensor, laws: list, xs: list, a: torch.Tensor) -> torch.Tensor:
    """P(a level's committed token != x*) for siblings xs with draft laws `laws` and acceptance rows a (k, V) against
    q (V,): exact (1 - Σ_K q)(1 - Π_j (1 - c_j)) for distinct point-mass siblings, else the bound 1 - Π_j (1 - max
    c_j over supp p_j). A 0-d tensor where q lives, not read."""
    xt = torch.tensor(xs, device=q.device)
    if a.dim() == 1:                 # a at the siblings' cells: distinct point masses (pointlevel.points), exact
        cj = relax_excess(a, sampling.exact_at(torch.ones_like(a), q[xt]))       # lossless(q, δ_x) at x
        return (1.0 - q[xt].sum()).clamp_min(0.0) * (1.0 - torch.prod(1 - cj))
    p = torch.stack(laws)
    c_rows = relax_excess(a, rules.lossless(q[None].expand_as(p), p))
    point = (p.amax(-1) >= 1.0).all() & (len(set(xs)) == len(xs))
    cj = torch.where(point, c_rows[torch.arange(len(xs), device=q.device), xt],
                     torch.where(p > 0, c_rows, torch.zeros_like(c_rows)).amax(-1))
    miss = torch.where(point, 1.0 - q[xt].sum(), torch.ones((), device=q.device))
    return miss.clamp_min(0.0) * (1.0 - torch.prod(1 - cj))


def _level(q, laws, xs, accept_rows) -> Level:
    """accept_rows: (the siblings' acceptance rows (k, V), or (k,) at their cells for distinct point masses, and
    their extras)."""
    a, extras = accept_rows
    xt = torch.tensor(xs, device=q.device)
    if a.dim() == 1:
        return Level(a, sampling.exact_at(torch.ones_like(a), q[xt]), [q] * len(xs), extras, q, q,
                     level_cost(q, laws, xs, a))
    rows = torch.arange(len(xs), device=q.device)
    p = torch.stack(laws)
    return Level(a[rows, xt], sampling.exact_at(p[rows, xt], q[xt]), [q] * len(xs), extras, q, q,
                 level_cost(q, laws, xs, a))


def keyed_level(tree: DraftTree, kids: list, q_cur: torch.Tensor, laws: list, accept_fn, group_fn, left: float):
    """The level's acceptance (every sibling judged against q itself), CASCADE's scale fitted so its keyed cost
    stays within `left`. Returns (Level, per-kid CandidateGroup)."""
    xs, cells = [tree.tokens[c] for c in kids], points(tree, kids)
    if group_fn is None:
        qk, p = q_cur[None].expand(len(kids), -1), torch.stack(laws)
        if cells:                    # distinct point masses: the rule at their cells (its `at`, else its rows there)
            xt, at = torch.tensor(xs, device=q_cur.device), getattr(accept_fn, "at", None)
            a = at(qk, p, xt) if at is not None else accept_fn(qk, p)[torch.arange(len(xs), device=xt.device), xt]
        else:
            a = accept_fn(qk, p)
        return _level(q_cur, laws, xs, (a, [0.0] * len(kids))), [CandidateGroup() for _ in kids]
    groups = [group_fn(c, kids) for c in kids]
    toks = [[tree.tokens[m] for m in g.members] for g in groups]
    return cascade_fit(q_cur, laws, xs, toks, left, walk=keyed_walk, cells=cells), groups


def keyed_walk(q: torch.Tensor, laws: list, xs: list, accept, residual=None) -> Level:
    """A level under keyed noise given each sibling's acceptance accept(j, r, p) -> (a, extra): every sibling is
    judged against q itself (verify.cascade_fit's `walk`), its numbers read in one read (verify.read_level)."""
    return read_level(keyed_tensors(q, laws, xs, accept, residual))


def keyed_tensors(q: torch.Tensor, laws: list, xs: list, accept, residual=None) -> Level:
    """keyed_walk's level with its numbers left where q lives (levelpack.cascade_full's `walk`)."""
    rows = [accept(j, q, p) for j, p in enumerate(laws)]
    return _level(q, laws, xs, (torch.stack([r[0] for r in rows]), [r[1] for r in rows]))


def _levels(tree, q, accept_fn, group_fn, budget, bonus_ok, noise, root_pos, norm, masses: dict) -> BudgetLevels:
    """treewalk._levels under keyed noise (budgetwalk.BudgetLevels): a level at s = 1 packed (keyed_pack); a level
    the budget must scale fitted by keyed_level (a read per build) and packed again; no uniforms from a stream."""
    def parts(cur):
        kids = tree.children[cur]
        leaves = [j for j, c in enumerate(kids) if not tree.children[c] and bonus_ok(tree.depths[c])]
        return kids, q[cur], kid_laws(tree, kids, q.shape[1], q.device), leaves, root_pos + tree.depths[cur] + 1

    def build(cur, groups, u, masks):
        kids, q_cur, laws, leaves, pos = parts(cur)
        lvl = cascade_full(q_cur, laws, [tree.tokens[c] for c in kids], [[tree.tokens[m] for m in g.members]
                                                                        for g in groups], keyed_tensors, None,
                           points(tree, kids), masks) if kids else None
        return keyed_pack(tree, kids, q, q_cur, laws, lvl, leaves, noise, pos, norm), lvl

    def refit(cur, left, u):
        kids, q_cur, laws, leaves, pos = parts(cur)
        lvl, groups = keyed_level(tree, kids, q_cur, laws, accept_fn, group_fn, left)
        return KeyedValues(keyed_pack(tree, kids, q, q_cur, laws, lvl, leaves, noise, pos, norm).tolist(), len(kids),
                           len(leaves)), lvl, groups
    return BudgetLevels(tree, q, group_fn, budget, build,
                        lambda cur, vals: KeyedValues(vals, len(tree.children[cur]), len(parts(cur)[3])), refit,
                        lambda nodes: dict.fromkeys(nodes), masses)


def keyed_tree(tree: DraftTree, q: torch.Tensor, accept_fn, noise: Noise, root_pos: int, group_fn, budget: float,
               bonus_ok, norm: str = "raw", reads: int = 2) -> TreeWalk:
    """verify_tree under keyed noise: at each node walk into the child equal to x* (the race of q at the children's
    position); a relaxed rule, when no child equals x*, accepts the first sibling whose keyed uniform is below its c.
    Without CASCADE's budget at most two reads (_keyed_ahead: the root's level, then the subtree the walk goes
    into; reads=1: all in one, levelpack.Ahead); CASCADE too while its levels fit (_levels, budgetwalk); norm: the run's
    entropy normalisation for the events."""
    path, steps, used, ent, masses = [0], [], 0.0, {}, {} if group_fn is not None else None
    ahead = _keyed_ahead(tree, q, accept_fn, noise, root_pos, bonus_ok, norm, reads) if group_fn is None else None
    levels = (_levels(tree, q, accept_fn, group_fn, budget, bonus_ok, noise, root_pos, norm, masses)
              if ahead is None else None)
    while True:
        cur = path[-1]
        kids = tree.children[cur]
        left = budget - used
        leaves = [j for j, c in enumerate(kids) if not tree.children[c] and bonus_ok(tree.depths[c])]
        if ahead is None:
            v, lvl, groups, extras = levels.at(cur, used)
            lvl = replace(lvl, extras=extras) if lvl is not None else None
        else:
            (v, lvl), groups = ahead.at(cur), [CandidateGroup() for _ in kids]
        if group_fn is not None and lvl is not None:
            used += v.cost
        ent[cur] = v.h
        xs = [tree.tokens[c] for c in kids]
        hit = xs.index(v.star) if v.star in xs else -1
        chosen = None
        for j, c in enumerate(kids):
            b, e, cj = v.b[j], v.exact[j], v.c[j]
            u = v.u[j] if hit < 0 and cj > 0 else -1.0
            ok = j == hit if hit >= 0 else (cj > 0 and u < cj)
            relaxed = ok and j != hit
            extra = 0.0
            if relaxed:
                extra = lvl.extras[j] if group_fn is not None else max(0.0, v.px[j] * b - v.qx[j])
            steps.append(TreeStep(node=c, level=tree.depths[c], accepted=ok, relaxed=relaxed, b=b, exact=e, u=u,
                                  p_x=v.px[j], q_x=v.qx[j], tv=v.tv[j], tv_residual=v.tv[j],
                                  tv_cost=v.cost, point_mass=tree.laws[c] is None, extra=extra,
                                  group=groups[j],
                                  budget_left=max(0.0, left) if group_fn is not None else 0.0, scale=lvl.scale,
                                  coupled=v.coupled[j], target_sample=v.star))
            if ok:
                chosen = j
                break
        if chosen is None:
            return TreeWalk(path, v.star, False, steps, ent, v.q_star, masses)
        path.append(kids[chosen])
        if not tree.children[kids[chosen]]:
            if chosen in leaves:
                tok, q_tok, ent[kids[chosen]] = v.bonus[chosen]
                return TreeWalk(path, tok, True, steps, ent, q_tok, masses)
            return TreeWalk(path, -1, False, steps, ent, masses=masses)


def _keyed_ahead(tree: DraftTree, q: torch.Tensor, accept_fn, noise: Noise, root_pos: int, bonus_ok,
                 norm: str, reads: int = 2) -> Ahead:
    """(KeyedValues, Level) of the levels a keyed walk reaches in at most two reads (levelpack.Ahead): a keyed
    level's numbers depend on its node and position alone, not on the path to it."""
    sizes, lvls = {}, {}

    def pack(cur):
        kids, pos = tree.children[cur], root_pos + tree.depths[cur] + 1
        q_cur, laws = q[cur], kid_laws(tree, kids, q.shape[1], q.device)
        leaves = [j for j, c in enumerate(kids) if not tree.children[c] and bonus_ok(tree.depths[c])]
        lvls[cur] = keyed_level(tree, kids, q_cur, laws, accept_fn, None, 0.0)[0] if kids else None
        sizes[cur] = (len(kids), len(leaves))
        return keyed_pack(tree, kids, q, q_cur, laws, lvls[cur], leaves, noise, pos, norm)
    return Ahead(tree, pack, lambda cur, vals: (KeyedValues(vals, *sizes[cur]), lvls[cur]), reads)


def keyed_pack(tree: DraftTree, kids: list, q: torch.Tensor, q_cur: torch.Tensor, laws: list, lvl: Level | None,
               leaves: list, noise: Noise, pos: int, norm: str) -> torch.Tensor:
    """One keyed level's numbers as one float64 vector where q lives (KeyedValues reads it): per kid b, exact,
    c = relax_excess(b, exact), its keyed uniform, p(x), q(x), TV(p, q), J_x/p_x; the level's cost; x* (the race of
    q_cur at pos) and q_cur(x*); H(q_cur) and its normalised value; when some kid is a bonus leaf (kid indices
    `leaves`), levelpack.bonus_part with the race of the leaf's law at pos + 1."""
    dev, k = q.device, len(kids)
    parts = []
    star = noise.scores(pos, q_cur).argmax(-1)
    if k:
        xs = [tree.tokens[c] for c in kids]
        xt = torch.tensor(xs, device=dev)
        b, e = (torch.as_tensor(v, dtype=torch.float32, device=dev) for v in (lvl.b, lvl.exact))
        u = torch.tensor([noise.u(pos, t) for t in xs], dtype=torch.float32, device=dev)     # noise.u_t's values
        c, qx = relax_excess(b, e), q_cur[xt]
        if points(tree, kids):       # δ_x's TV and coupling from its cell (pointlevel)
            sib = [torch.ones_like(qx), qx, point_tvs(q_cur, qx), point_coupled(q_cur, qx)]
        else:
            p, rows = torch.stack(laws), torch.arange(k, device=dev)
            sib = [p[rows, xt], qx, tv(p, q_cur[None]), coupled_accept(p, q_cur[None].expand_as(p), xt)]
        parts += [b, e, c, u, *sib, torch.as_tensor(lvl.cost, device=dev).view(1)]
    h = entropy(q_cur)
    parts += [star.view(1), q_cur[star].view(1), h.view(1), normalised_entropy(h, q_cur, norm).view(1)]
    if leaves:
        hit = xt == star
        ok = torch.where(hit.any(), hit, (c > 0) & (u < c))
        parts += bonus_part(q, kids, leaves, ok, None, norm, lambda law: noise.scores(pos + 1, law).argmax(-1))
    return torch.cat(parts).to(torch.float64)          # 1-d parts; cat promotes (tokens < 2^24: exact in float32)


class KeyedValues:
    """keyed_pack's values read back (vals: the list; k kids, n bonus leaves)."""

    def __init__(self, vals: list, k: int, n: int):
        it = iter(vals)

        def take(m):
            return [next(it) for _ in range(m)]
        self.b, self.exact, self.c, self.u, self.px, self.qx, self.tv, self.coupled = (take(k) for _ in range(8))
        (self.cost,) = take(1) if k else (0.0,)
        star, self.q_star = take(2)
        self.star, self.h = int(star), tuple(take(2))
        self.bonus = bonus_values(take(5 if n else 0))
