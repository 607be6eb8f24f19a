"""One tree level's numbers in one read (verify.verify_tree): level_pack stacks, where q lives, everything a level
of the walk can need after its decisions (the level's numbers, its uniforms, the tokens the walk could sample there
and their laws' values); LevelValues reads them back from the one list."""
from __future__ import annotations

import torch

from specviz.core.sampling import draw, entropy, normalised_entropy
from specviz.engine import rules
from specviz.engine.groups import cascade_masked
from specviz.engine.pointlevel import cascade_cell
from specviz.engine.verify import Level, level_tensors, point_tensors


def level_pack(tree, kids: list, q: torch.Tensor, q_cur: torch.Tensor, laws: list, lvl, tvs: tuple, leaves: list,
               u: torch.Tensor, norm: str) -> torch.Tensor:
    """One level's numbers as one float64 vector where q lives (LevelValues reads it): per kid b, exact, p(x),
    r(x) (r: the law it is judged against), TV(p, q), TV(p, r) (tvs: those two as (k,) tensors); the level's cost;
    the k + 1 uniforms u; H(q_cur) and its normalised value; the token resampled from the level's end law with u[k]
    and q_cur there; when some kid is a bonus leaf (kid indices `leaves`), bonus_part."""
    dev, k = q.device, len(kids)
    u = u.to(dev)
    f64 = [torch.as_tensor(lvl.b, dtype=torch.float32, device=dev), torch.as_tensor(lvl.exact, dtype=torch.float32,
                                                                                     device=dev)]
    if k:
        xs = [tree.tokens[c] for c in kids]
        f64 += list(lvl.cells) if lvl.cells is not None else [torch.stack([law[x] for law, x in zip(laws, xs)]),
                                                               torch.stack([r[x] for r, x in zip(lvl.targets, xs)])]
        f64 += [tvs[0], tvs[1]]
    h = entropy(q_cur)
    end = draw(lvl.end, u[k])
    f64 += [torch.as_tensor(lvl.cost, device=dev).view(1), u, h.view(1), normalised_entropy(h, q_cur, norm).view(1),
            end.view(1), q_cur[end].view(1)]
    if leaves:
        f64 += bonus_part(q, kids, leaves, u[:k] < f64[0], u, norm)
    return torch.cat(f64).to(torch.float64)            # 1-d parts; cat promotes (tokens < 2^24: exact in float32)


def first_bonus_leaf(kids: list, leaves: list, ok: torch.Tensor) -> torch.Tensor:
    """The kid index (0-d long, where ok lives) of the first accepted kid if it is a bonus leaf, else the first bonus
    leaf (a value the walk will not use): the one kid whose bonus a level can need, chosen without a read."""
    k = len(kids)
    first = torch.where(ok.any(), ok.to(torch.uint8).argmax(), k)              # argmax: the first maximal index
    is_leaf = torch.zeros(k + 1, dtype=torch.bool, device=ok.device)
    is_leaf[leaves] = True
    return torch.where(is_leaf[first], first, leaves[0])


def bonus_part(q: torch.Tensor, kids: list, leaves: list, ok: torch.Tensor, u: torch.Tensor, norm: str,
               token=None) -> list:
    """[the bonus leaf's kid index, its bonus token, q there, H and normalised H of its law] for the one bonus leaf
    the level can need (first_bonus_leaf): the token drawn with u[j + 1] (papers' noise), or token(law) (keyed)."""
    j = first_bonus_leaf(kids, leaves, ok)
    law = q[torch.tensor(kids, device=q.device)[j]]
    tok = draw(law, u[j + 1]) if token is None else token(law)
    h = entropy(law)
    return [j.view(1), tok.view(1), law[tok].view(1), h.view(1), normalised_entropy(h, law, norm).view(1)]


class LevelValues:
    """level_pack's values read back (vals: the list; k kids, n bonus leaves; bonus: bonus_values)."""

    def __init__(self, vals: list, k: int, n: int):
        it = iter(vals)

        def take(m):
            return [next(it) for _ in range(m)]
        self.b, self.exact = take(k), take(k)
        self.px, self.rx = take(k), take(k)
        tvs = take(2 * k)
        self.tvq, self.tvr = tvs[:k], tvs[k:]
        (self.cost,), self.u = take(1), take(k + 1)
        self.h = tuple(take(2))
        end, q_end = take(2)
        self.end = (int(end), q_end)
        self.bonus = bonus_values(take(5 if n else 0))


def bonus_values(vals: list) -> dict:
    """bonus_part's values: {kid index: (bonus token, q there, (H, normalised H))} (empty when no bonus leaf)."""
    if not vals:
        return {}
    j, tok, q_tok, h, hn = vals
    return {int(j): (int(tok), q_tok, (h, hn))}


def walkable(tree, node: int = 0) -> list:
    """The nodes whose level a walk can reach in node's subtree: node itself and every descendant with children (a
    walk that accepts a leaf ends there); node order (parents first)."""
    out, todo = [], [node]
    while todo:
        i = todo.pop(0)
        if i == node or tree.children[i]:
            out.append(i)
            todo += tree.children[i]
    return out


def uniform_offsets(tree) -> list:
    """Where each node's level starts in the papers' stream of uniforms of one walk: a level with k kids draws
    k + 1 and the walk, accepting kid j and going on, uses j + 1 of them, so kid j's level starts j + 1 after its
    parent's (parents precede children, so one pass in node order)."""
    off = [0] * len(tree.tokens)
    for i, kids in enumerate(tree.children):
        for j, c in enumerate(kids):
            off[c] = off[i] + j + 1
    return off


class Ahead:
    """A walk's levels in at most two reads (treewalk.verify_tree, keyed.keyed_tree without CASCADE's budget): the
    root's level first; when the walk goes on into a kid with children, every level of that kid's subtree
    (walkable) at once, so no later level needs a read; reads=1: every level the walk can reach in the first read
    (a caller with another read in its step). pack(node) -> the level's float64 vector where q lives; value(node,
    list) -> its values read back. The tree's rider (DraftTree.rider) packs its numbers for each level read here into
    the same read (pack per level, then `drawn` makes those of all the read's levels at once)."""

    def __init__(self, tree, pack, value, reads: int = 2):
        self.tree, self.pack, self.value, self.values, self.reads = tree, pack, value, {}, reads

    def at(self, node: int):
        if node not in self.values:
            first = [0] if self.reads > 1 else walkable(self.tree)
            packs = {c: self.pack(c) for c in (first if node == 0 else walkable(self.tree, node))}
            ride = self.tree.rider                       # the drafter's numbers for the walk's ends at these levels
            rides = {(c,): t for c in packs if ride is not None and (t := ride.pack(c)) is not None}
            rides = ride.drawn(rides) if rides else rides        # the rider's numbers of all these levels at once
            vals = read_ahead(packs | rides)
            self.values.update({c: self.value(c, vals[c]) for c in packs})
            for (c,) in rides:
                ride.take(c, vals[c,])
        return self.values[node]


def read_ahead(packs: dict) -> dict:
    """{node: its level's float64 pack} -> {node: its values as a list}: every pack in ONE read."""
    vals = torch.cat(list(packs.values())).tolist() if packs else []
    out, at = {}, 0
    for node, t in packs.items():
        out[node] = vals[at:at + t.numel()]
        at += t.numel()
    return out


def cascade_full(q: torch.Tensor, laws: list, xs: list, members: list | None, walk=None, residual=None,
                 cells: bool = False, masks: tuple | None = None) -> Level:
    """verify.cascade_fit's first build, the level at s = 1, with its numbers left where q lives (nothing read): a walk
    packs it with fit_part and reads both at once, and fits (cascade_fit) only a level fit_part says must be scaled.
    walk: an unread builder (q, laws, xs, accept, residual) -> Level (keyed noise: keyed.keyed_tensors); default
    point_tensors (cells) or level_tensors, what cascade_fit's point_law / level_law read. masks: (the tree's distinct
    tokens, (k, C) mask) from groups.Groups.masks in place of the members' tokens (groups.cascade_masked)."""
    cells = cells and residual is None
    rule = cascade_cell if cells else rules.cascade
    walk = walk or ((lambda *a: point_tensors(*a, cell=a[3])) if cells else level_tensors)
    if masks is None:
        accept = lambda j, r, p: rule(r, p, xs[j], members[j], 1.0)                              # noqa: E731
    else:
        accept = lambda j, r, p: cascade_masked(r, p, xs[j], masks[0], masks[1][j], 1.0, cells)   # noqa: E731
    lvl = walk(q, laws, xs, accept, residual)
    lvl.scale = 1.0
    return lvl


def fit_part(lvl: Level, left) -> torch.Tensor:
    """[the extras (k,), fits] as float64 where q lives, of a level at s = 1 (cascade_full): fits = 1.0 when
    verify.fit_level keeps it (TV(o, q) <= left, or no sibling adds mass), else 0.0, compared in float64 as
    fit_level compares the read values; left: a float, or a float64 0-d tensor (budgetwalk.path_lefts)."""
    dev = lvl.end.device
    ex = torch.stack([torch.as_tensor(e, dtype=torch.float64, device=dev) for e in lvl.extras]) if lvl.extras else \
        torch.zeros(0, dtype=torch.float64, device=dev)
    fits = (torch.as_tensor(lvl.cost, dtype=torch.float64, device=dev) <= left) | ~(ex != 0).any()
    return torch.cat([ex, fits.to(torch.float64).view(1)])


def member_masses(tree, cur: int, groups: list, q_cur: torch.Tensor) -> tuple[list, torch.Tensor]:
    """CASCADE's Sibling records' masses of one level (events.sibling_masses, for every sibling's group candidates,
    not only the judged ones): the keys (cur, m) and q_cur at each m's token, gathered where q lives, not read."""
    ms = list(dict.fromkeys(m for g in groups for m in g.cos))
    return [(cur, m) for m in ms], q_cur[torch.tensor([tree.tokens[m] for m in ms], dtype=torch.long,
                                                      device=q_cur.device)].to(torch.float64)
