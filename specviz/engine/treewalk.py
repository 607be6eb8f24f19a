"""The papers' tree walk (P3: siblings in order against the running residual, level by level), on the level laws of
verify.py: a level's numbers, its uniforms and every token the walk could sample there are packed where q lives
(levelpack.level_pack) and read at once. Without CASCADE's budget a step reads at most twice (`_ahead`: the root's
level, then every level of the subtree the walk goes into); CASCADE reads so too while its levels fit its budget
unscaled (`_levels`, engine/budgetwalk.py: each level's budget test against its own path's spending)."""
from __future__ import annotations

from typing import Callable

import torch

from specviz.engine.budgetwalk import BudgetLevels
from specviz.engine.drafters.draft_tree import DraftTree
from specviz.engine.groups import CandidateGroup
from specviz.engine.levelpack import (
    Ahead,
    LevelValues,
    cascade_full,
    level_pack,
    uniform_offsets,
    walkable,
)
from specviz.engine.pointlevel import point_tvs, point_tvs_each, points
from specviz.engine.verify import (
    AcceptFn,
    GroupFn,
    TreeStep,
    TreeWalk,
    judge_level,
    kid_laws,
    level_tensors,
    point_tensors,
    sibling_tvs,
)


def verify_tree(tree: DraftTree, q: torch.Tensor, accept_fn: AcceptFn, gen: torch.Generator, group_fn: GroupFn | None,
                budget: float, bonus_ok: Callable[[int], bool], norm: str = "raw", reads: int = 2) -> TreeWalk:
    """Walk the tree from the root. q (N, V): target law at each node's children position.
    group_fn (CASCADE) gives the relaxation group of a candidate; `budget` bounds Σ over the step's judged levels of
    TV(o_level, q_level) (CASCADE only). A level's numbers, its uniforms (drawn from `gen` in today's order, the
    generator then advanced by exactly what the walk used) and every token the walk could sample there are packed
    where q lives (level_pack). Without a budget at most two reads (`_ahead`: the root's level, then every level
    of the subtree the walk goes into); CASCADE too while its levels fit unscaled (`_levels`: a level the budget
    must scale reads once per fit build, engine/budgetwalk.py). norm: the run's entropy normalisation for the
    events; reads: levelpack.Ahead's."""
    path, steps, used, ent, masses = [0], [], 0.0, {}, {} if group_fn is not None else None
    ahead = _ahead(tree, q, accept_fn, gen, bonus_ok, norm, reads) if group_fn is None else None
    levels = _levels(tree, q, accept_fn, gen, group_fn, budget, bonus_ok, norm, masses) if ahead is None else None
    while True:
        cur = path[-1]
        kids = tree.children[cur]
        left = budget - used
        leaves = _leaves(tree, kids, bonus_ok)
        if ahead is None:
            v, lvl, groups, extras = levels.at(cur, used)
            scale, used = lvl.scale, used + v.cost
        else:
            v, groups, scale, extras = ahead.at(cur), [CandidateGroup() for _ in kids], 1.0, None
        ent[cur] = v.h
        chosen = next((j for j in range(len(kids)) if v.u[j] < v.b[j]), None)
        for j, c in enumerate(kids[:len(kids) if chosen is None else chosen + 1]):
            ok = j == chosen
            relaxed = ok and v.u[j] >= v.exact[j]
            extra = 0.0
            if relaxed:
                extra = extras[j] if extras is not None else max(0.0, v.px[j] * v.b[j] - v.rx[j])
            steps.append(TreeStep(node=c, level=tree.depths[c], accepted=ok, relaxed=relaxed, b=v.b[j],
                                  exact=v.exact[j], u=v.u[j], p_x=v.px[j], q_x=v.rx[j], tv=v.tvq[j],
                                  tv_residual=v.tvr[j], tv_cost=v.cost, point_mass=tree.laws[c] is None, extra=extra,
                                  group=groups[j],
                                  budget_left=max(0.0, left) if group_fn is not None else 0.0, scale=scale))
        if chosen is None:
            torch.rand(len(kids) + 1, generator=gen)
            return TreeWalk(path, v.end[0], False, steps, ent, v.end[1], masses)
        path.append(kids[chosen])
        if not tree.children[kids[chosen]]:
            if chosen in leaves:
                torch.rand(chosen + 2, generator=gen)
                tok, q_tok, ent[kids[chosen]] = v.bonus[chosen]
                return TreeWalk(path, tok, True, steps, ent, q_tok, masses)
            torch.rand(chosen + 1, generator=gen)
            return TreeWalk(path, -1, False, steps, ent, masses=masses)
        torch.rand(chosen + 1, generator=gen)


def _levels(tree, q, accept_fn, gen, group_fn, budget, bonus_ok, norm, masses: dict) -> BudgetLevels:
    """CASCADE's levels of the walk (budgetwalk.BudgetLevels: two reads while they fit): a level at s = 1
    (levelpack.cascade_full) packed (_pack); a level the budget must scale fitted as before (judge_level: one read per
    build) and packed again; the uniforms of a subtree's levels drawn in one batch from `gen` and rewound, each level's
    slice where the walk would be in the stream on arriving there (levelpack.uniform_offsets)."""
    off, residual = uniform_offsets(tree), getattr(accept_fn, "residual", None)

    def parts(cur):
        kids = tree.children[cur]
        return kids, q[cur], kid_laws(tree, kids, q.shape[1], q.device), _leaves(tree, kids, bonus_ok)

    def build(cur, groups, u, masks):
        kids, q_cur, laws, leaves = parts(cur)
        lvl = cascade_full(q_cur, laws, [tree.tokens[c] for c in kids], [[tree.tokens[m] for m in g.members]
                                                                        for g in groups], residual=residual,
                           cells=points(tree, kids), masks=masks)
        return _pack(tree, kids, q, q_cur, laws, lvl, leaves, u, norm), lvl

    def refit(cur, left, u):
        kids, q_cur, laws, leaves = parts(cur)
        lvl, groups = judge_level(tree, kids, q_cur, accept_fn, group_fn, left, laws)
        return LevelValues(_pack(tree, kids, q, q_cur, laws, lvl, leaves, u, norm).tolist(), len(kids),
                           len(leaves)), lvl, groups

    def uniforms(nodes):
        s, state = off[nodes[0]], gen.get_state()
        u = torch.rand(max(off[c] - s + len(tree.children[c]) + 1 for c in nodes), generator=gen)
        gen.set_state(state)                              # the uniforms the walk used, no more (verify_tree)
        return {c: u[off[c] - s:off[c] - s + len(tree.children[c]) + 1] for c in nodes}
    def value(cur, vals):
        kids = tree.children[cur]
        return LevelValues(vals, len(kids), len(_leaves(tree, kids, bonus_ok)))
    return BudgetLevels(tree, q, group_fn, budget, build, value, refit, uniforms, masses)


def _leaves(tree: DraftTree, kids: list, bonus_ok: Callable[[int], bool]) -> list:
    """The kid indices that are bonus leaves: childless, with a position after them."""
    return [j for j, c in enumerate(kids) if not tree.children[c] and bonus_ok(tree.depths[c])]


def _pack(tree, kids, q, q_cur, laws, lvl, leaves, u, norm) -> torch.Tensor:
    """One level's level_pack with its siblings' TVs (distinct point masses: from their cells, pointlevel)."""
    xs = [tree.tokens[c] for c in kids]
    if points(tree, kids):
        tvs = (point_tvs(q_cur, q_cur[torch.tensor(xs, device=q.device)]),
               point_tvs_each(lvl.targets, xs, lvl.cells[1] if lvl.cells is not None else None))
    else:
        each = [sibling_tvs(laws[j], q_cur, lvl.targets[j]) for j in range(len(kids))]
        tvs = tuple(torch.stack([torch.as_tensor(t[i], dtype=torch.float64, device=q.device) for t in each])
                    if each else torch.zeros(0, dtype=torch.float64) for i in (0, 1))
    return level_pack(tree, kids, q, q_cur, laws, lvl, tvs, leaves, u, norm)


def _ahead(tree, q, accept_fn, gen, bonus_ok, norm, reads: int = 2) -> Ahead:
    """The levels of a walk without a budget (levelpack.Ahead: the root's, then the subtree the walk goes into, at
    most two reads): the uniforms of every level drawn in one batch from `gen` (then rewound: the walk advances it
    by what it used), each level's slice where the walk would be in the stream on arriving there
    (levelpack.uniform_offsets)."""
    off = uniform_offsets(tree)
    state = gen.get_state()
    u = torch.rand(max(off[c] + len(tree.children[c]) + 1 for c in walkable(tree)), generator=gen)
    gen.set_state(state)
    residual, at, sizes = getattr(accept_fn, "residual", None), getattr(accept_fn, "at", None), {}

    def pack(cur):
        kids = tree.children[cur]
        q_cur, laws, leaves = q[cur], kid_laws(tree, kids, q.shape[1], q.device), _leaves(tree, kids, bonus_ok)
        xs = [tree.tokens[c] for c in kids]
        accept = lambda j, r, p: (accept_fn(r[None], p[None])[0], 0.0)                       # noqa: E731
        if points(tree, kids):                      # a rule's `at`: its value at the sibling's cell alone
            xt = torch.tensor(xs, device=q.device)
            cell = (lambda j, r, p: (at(r[None], p[None], xt[j:j + 1])[0], 0.0)) if at is not None else None
            lvl = point_tensors(q_cur, laws, xs, accept, residual, cell)
        else:
            lvl = level_tensors(q_cur, laws, xs, accept, residual)
        sizes[cur] = (len(kids), len(leaves))
        return _pack(tree, kids, q, q_cur, laws, lvl, leaves, u[off[cur]:off[cur] + len(kids) + 1], norm)
    return Ahead(tree, pack, lambda cur, vals: LevelValues(vals, *sizes[cur]), reads)
