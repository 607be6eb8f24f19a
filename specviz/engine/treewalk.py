"""The papers' tree walk (P3: siblings in order against the running residual, level by level), on the level laws of
verify.py: a level's numbers, its uniforms and every token the walk could sample there are packed where q lives
(levelpack.level_pack) and read at once. Without CASCADE's budget a step reads at most twice (`_ahead`: the root's
level, then every level of the subtree the walk goes into); CASCADE, whose budget left depends on the levels
walked, reads once per level."""
from __future__ import annotations

from typing import Callable

import torch

from specviz.engine.drafters.draft_tree import DraftTree
from specviz.engine.groups import CandidateGroup
from specviz.engine.levelpack import (
    Ahead,
    LevelValues,
    cascade_full,
    fit_part,
    level_pack,
    member_masses,
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
    of the subtree the walk goes into); CASCADE, whose budget left depends on the levels walked, reads once per
    level walked. norm: the run's entropy normalisation for the events; reads: levelpack.Ahead's."""
    path, steps, used, ent, masses = [0], [], 0.0, {}, {} if group_fn is not None else None
    ahead = _ahead(tree, q, accept_fn, gen, bonus_ok, norm, reads) if group_fn is None else None
    while True:
        cur = path[-1]
        kids = tree.children[cur]
        left = budget - used
        leaves = _leaves(tree, kids, bonus_ok)
        if ahead is None:
            state = gen.get_state()
            u = torch.rand(len(kids) + 1, generator=gen)
            gen.set_state(state)                              # the uniforms the walk used, no more (below)
            v, groups, scale, extras = _budget_level(tree, cur, q, accept_fn, group_fn, left, leaves, u, norm, masses)
            used = used + v.cost
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


def _budget_level(tree, cur, q, accept_fn, group_fn, left, leaves, u, norm, masses: dict) -> tuple:
    """A CASCADE level in one read while it fits: the level at s = 1 (levelpack.cascade_full) packed with its fit test
    (fit_part) and its siblings' Sibling masses (member_masses, added to `masses`); a level the budget must scale is
    fitted as before (judge_level: one read per build) and packed again. -> (LevelValues, groups, scale, extras)."""
    kids, q_cur = tree.children[cur], q[cur]
    laws, xs = kid_laws(tree, kids, q.shape[1]), [tree.tokens[c] for c in kids]
    groups = [group_fn(c, kids) for c in kids]
    lvl = cascade_full(q_cur, laws, xs, [[tree.tokens[m] for m in g.members] for g in groups],
                       residual=getattr(accept_fn, "residual", None), cells=points(tree, kids))
    pack = _pack(tree, kids, q, q_cur, laws, lvl, leaves, u, norm)
    keys, mq = member_masses(tree, cur, groups, q_cur)
    vals = torch.cat([pack, fit_part(lvl, left), mq]).tolist()
    n, k = pack.numel(), len(kids)
    extras = vals[n:n + k]
    masses.update(zip(keys, vals[n + k + 1:]))
    if not vals[n + k]:                                       # the budget binds: scale the level (reads), pack again
        lvl, groups = judge_level(tree, kids, q_cur, accept_fn, group_fn, left, laws)
        vals, extras = _pack(tree, kids, q, q_cur, laws, lvl, leaves, u, norm).tolist(), lvl.extras
    return LevelValues(vals[:n], k, len(leaves)), groups, lvl.scale, extras


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
        q_cur, laws, leaves = q[cur], kid_laws(tree, kids, q.shape[1]), _leaves(tree, kids, bonus_ok)
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
