"""Verification of a draft chain (Jacobi window) or a draft tree against the target laws of one forward.

Chains are judged in one vectorised pass (pitfall 15): acceptance functions for all slots, one uniform per slot,
first rejection by cumulative product. Trees walk level by level (P3: siblings in order against the running
residual); the only Python loop is over levels and the few siblings of the accepted node.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

from specviz import rules
from specviz.sampling import sample, tv

AcceptFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]     # (q (L,V), p (L,V)) -> a (L,V)


@dataclass
class ChainResult:
    accepted: int                   # drafts accepted (a prefix)
    new_token: int                  # resampled at slot `accepted`, or bonus after the last draft; -1 if none
    bonus: bool
    judged: int                     # slots judged (accepted + the first rejection, if any)
    j: rules.Judgement | None       # per-slot tensors (all slots, only the first `judged` are meaningful)
    u: torch.Tensor | None


def verify_chain(q: torch.Tensor, p: torch.Tensor, x: torch.Tensor, accept_fn: AcceptFn, gen: torch.Generator,
                 bonus_ok: bool) -> ChainResult:
    """q (k+1, V) target laws for the k draft slots plus the slot after them; p (k, V) draft laws; x (k,) drafts.
    bonus_ok: whether a token after the last draft exists (False at the end of the image). A rule's own residual
    rides on the acceptance function as `accept_fn.residual` (docs/methods.md §1.2)."""
    k = len(x)
    if k == 0:
        return ChainResult(0, int(sample(q[0], gen)), True, 0, None, None)
    u = torch.rand(k, generator=gen)
    jd = rules.judge(q[:k], p, accept_fn(q[:k], p), x, u, getattr(accept_fn, "residual", None))
    m = int(jd.accepted.long().cumprod(0).sum())
    if m < k:
        return ChainResult(m, int(sample(jd.residual[m], gen)), False, m + 1, jd, u)
    new = int(sample(q[k], gen)) if bonus_ok else -1
    return ChainResult(k, new, bonus_ok, k, jd, u)


@dataclass
class Tree:
    """A draft tree. Node 0 is the root (the newest committed token, no KV yet); parents precede children."""
    tokens: list[int]
    parents: list[int]
    depths: list[int]
    laws: list                        # per node: (V,) law the node was drawn from, or None for a point mass
    children: list = field(default_factory=list)

    def __post_init__(self):
        self.children = [[] for _ in self.tokens]
        for i, par in enumerate(self.parents):
            if par >= 0:
                self.children[par].append(i)

    def mask(self) -> torch.Tensor:
        """(N, N) bool: row i sees itself and its ancestors."""
        n = len(self.tokens)
        m = torch.zeros(n, n, dtype=torch.bool)
        for i in range(n):
            j = i
            while j >= 0:
                m[i, j] = True
                j = self.parents[j]
        return m


@dataclass
class TreeStep:
    """One judged candidate of a tree walk."""
    node: int
    level: int
    accepted: bool
    relaxed: bool
    b: float
    exact: float
    u: float
    p_x: float
    q_x: float
    tv: float
    tv_cost: float
    point_mass: bool
    extra: float = 0.0
    group: list = field(default_factory=list)
    info: dict = field(default_factory=dict)


GroupFn = Callable[[int, list], tuple[list, dict]]    # (node, sibling order) -> (member nodes, info)


def verify_tree(tree: Tree, q: torch.Tensor, accept_fn: AcceptFn, gen: torch.Generator, group_fn: GroupFn | None,
                budget: float, bonus_ok: Callable[[int], bool]) -> tuple[list[int], int, bool, list[TreeStep]]:
    """Walk the tree from the root. q (N, V): target law at each node's children position.
    group_fn (CASCADE) gives the relaxation group of a candidate; budget caps the moved mass of the step.
    Returns (accepted path of node ids from the root, new token or -1, bonus?, judged candidates)."""
    path, steps, used = [0], [], 0.0
    while True:
        cur = path[-1]
        chosen, residual, level_steps = _judge_level(tree, cur, q[cur], accept_fn, gen, group_fn, budget - used)
        steps += level_steps
        if chosen is None:
            return path, int(sample(residual, gen)), False, steps
        used += level_steps[-1].extra if group_fn is not None else 0.0
        path.append(chosen)
        if not tree.children[chosen]:
            if bonus_ok(len(path) - 1):
                return path, int(sample(q[chosen], gen)), True, steps
            return path, -1, False, steps


def _judge_level(tree: Tree, cur: int, q_node: torch.Tensor, accept_fn, gen, group_fn, budget_left: float):
    """P3 over the children of `cur`: each sibling against the running residual; the first accepted wins.
    Also follows the siblings after the winner hypothetically (no random draws) to get the position's exact output
    law o = sum_j reach_j p_j a_j + reach_end r_end, so every event there records TV(o, q) as its cost."""
    vocab = q_node.shape[0]
    q_cur, reach, out = q_node, 1.0, torch.zeros_like(q_node)
    chosen, residual, steps = None, None, []
    for c in tree.children[cur]:
        p_c = tree.laws[c] if tree.laws[c] is not None else rules.point_mass(torch.tensor(tree.tokens[c]), vocab)
        x = tree.tokens[c]
        extra, group, info = 0.0, [], {}
        if group_fn is not None:
            group, info = group_fn(c, tree.children[cur])
            a, extra = rules.cascade(q_cur, p_c, x, [tree.tokens[g] for g in group], budget_left)
        else:
            a = accept_fn(q_cur[None], p_c[None])[0]
        pa = p_c * a
        out += reach * pa
        reach *= max(0.0, 1.0 - float(pa.sum()))
        if chosen is None:
            u = torch.rand(1, generator=gen)
            jd = rules.judge(q_cur[None], p_c[None], a[None], torch.tensor([x]), u)
            ok = bool(jd.accepted[0])
            relaxed = bool(jd.relaxed[0])
            if group_fn is None:                      # mass granted at x beyond q (CASCADE reports its own)
                extra = max(0.0, float(pa[x] - q_cur[x]))
            steps.append(TreeStep(c, tree.depths[c], ok, relaxed, float(jd.accept_prob[0]), float(jd.exact_prob[0]),
                                  float(u[0]), float(p_c[x]), float(q_cur[x]), float(tv(p_c, q_cur)), 0.0,
                                  tree.laws[c] is None, extra if ok and relaxed else 0.0, group, info))
            if ok:
                chosen = c
            residual = jd.residual[0]
        else:
            residual = rules.judge(q_cur[None], p_c[None], a[None], torch.tensor([x]), torch.ones(1)).residual[0]
        q_cur = residual
    out += reach * q_cur
    cost = float(tv(out, q_node))
    for st in steps:
        st.tv_cost = cost
    return chosen, (q_cur if chosen is None else None), steps
