"""Verification of a draft chain (Jacobi window) or a draft tree against the target laws of one forward.

Chains are judged in one vectorised pass (pitfall 15): acceptance functions for all slots, one uniform per slot,
first rejection by cumulative product. Trees walk level by level (P3: siblings in order against the running
residual). Each level's exact output law is built BEFORE deciding (`level_law`), so its TV to q is known, and
CASCADE's relaxation is scaled to fit the step's TV budget (`fit_level`) before any uniform is drawn.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
import torch

from specviz.core import sampling
from specviz.core.sampling import sample, tv
from specviz.engine import rules
from specviz.engine.drafters.draft_tree import DraftTree
from specviz.engine.groups import CandidateGroup
from specviz.engine.pointlevel import cascade_cell, points

AcceptFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]     # (q (L,V), p (L,V)) -> a (L,V)


@dataclass
class ChainResult:
    accepted: int                   # drafts accepted (a prefix)
    new_token: int                  # resampled at slot `accepted`, or bonus after the last draft; -1 if none
    bonus: bool
    judged: int                     # slots judged (accepted + the first rejection, if any)
    j: rules.Judgement | None       # per-slot tensors (all slots, only the first `judged` are meaningful)
    u: torch.Tensor | None
    coupled: list | None = None     # keyed noise (engine/keyed.py): J_x/p_x per judged slot, and x* per slot
    target: list | None = None


def settled(res: ChainResult) -> ChainResult:
    """A lazy result (`lazy=True`: new_token a 0-d tensor or -1, coupled / target tensors, still on the device) with
    its values read; the families read them with the step's other numbers in one packed read instead."""
    tok = res.new_token if isinstance(res.new_token, int) else int(res.new_token)
    lst = [v.tolist() if torch.is_tensor(v) else v for v in (res.coupled, res.target)]
    return ChainResult(res.accepted, tok, res.bonus, res.judged, res.j, res.u, *lst)


def verify_chain(q: torch.Tensor, p: torch.Tensor, x: torch.Tensor, accept_fn: AcceptFn, gen: torch.Generator,
                 bonus_ok: bool, lazy: bool = False) -> ChainResult:
    """q (k+1, V) target laws for the k draft slots plus the slot after them; p (k, V) draft laws; x (k,) drafts.
    bonus_ok: whether a token after the last draft exists (False at the end of the image). A rule's own residual
    rides on the acceptance function as `accept_fn.residual` (docs/methods.md §1.2). The uniforms come from the
    host generator `gen` in today's order and are applied where q lives; the one value read is the accepted count
    (it decides how many uniforms follow); lazy: the new token stays a tensor (see `settled`)."""
    k = len(x)
    if k == 0:
        res = ChainResult(0, sample(q[0], gen), True, 0, None, None)
        return res if lazy else settled(res)
    u = torch.rand(k, generator=gen).to(q.device)
    a, b = rules.accept_at(accept_fn, q[:k], p, x)
    m = int((u < b).long().cumprod(0).sum())
    j = min(m + 1, k)                       # the judged slots: only they need a full row, a residual and a cost
    jd = rules.judge(q[:j], p[:j], accept_fn(q[:j], p[:j]) if a is None else a[:j], x[:j], u[:j],
                     getattr(accept_fn, "residual", None), b[:j])
    if m < k:
        res = ChainResult(m, sample(jd.residual[m], gen), False, m + 1, jd, u)
    else:
        res = ChainResult(k, sample(q[k], gen) if bonus_ok else -1, bonus_ok, k, jd, u)
    return res if lazy else settled(res)


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
    q_x: float                        # the law it was judged against (q, or the running residual) at x
    tv: float                         # TV(p, q) against the level's target law q
    tv_residual: float                # TV(p, r) against the running residual r it was judged against
    tv_cost: float                    # TV(o, q) of the level's whole walk
    point_mass: bool
    extra: float = 0.0
    group: CandidateGroup = field(default_factory=CandidateGroup)     # CASCADE: the candidate's group
    budget_left: float = 0.0          # CASCADE: budget the level could use, before deciding
    scale: float = 1.0                # CASCADE: factor s on every sibling's extra mass at this level
    coupled: float | None = None      # keyed noise only: J_x/p_x, and the target's race sample x* at this position
    target_sample: int | None = None


@dataclass
class TreeWalk:
    """The result of one tree walk (verify_tree)."""
    path: list                        # accepted node ids from the root (node 0)
    new_token: int                    # the resampled or bonus token, -1 when none
    bonus: bool                       # new_token is a bonus token after an accepted leaf
    judged: list                      # list[TreeStep]: every judged candidate, in judge order
    entropies: dict = field(default_factory=dict)   # node -> (H, H normalised) of q at its children's position
    new_q: float | None = None        # q(new_token) at its position, when the walk read it
    masses: dict | None = None        # CASCADE: {(parent, m): q at the parent's children position on m's token}, for
    #                                   every group candidate m of the walked levels' siblings (events' Sibling records)


@dataclass
class Level:
    """One level's sibling walk, exactly, for fixed sibling laws p_1..p_k (no random draws).
    Sibling j is judged against the running residual r_{j-1} (r_0 = q): b_j = a_j(x_j), r_j = norm(res(r_{j-1}, p_j,
    a_j)). Output law o = Σ_j R_j p_j·a_j + R_k r_k with R_j = Π_{i<j} (1 - Σ p_i·a_i) (all siblings, also those after
    the one a walk accepts); cost = TV(o, q). For point-mass siblings o is the level's exact output law."""
    b: list                           # (k,) acceptance probability of each sibling at its token
    exact: list                       # (k,) min(1, r_{j-1}(x_j) / p_j(x_j))
    targets: list                     # (k,) of (V,): r_{j-1}, the law sibling j is judged against
    extras: list                      # (k,) CASCADE mass added to r_{j-1}(x_j) (0 for other rules)
    end: torch.Tensor                 # (V,) r_k: the law a token is resampled from when every sibling fails
    law: torch.Tensor                 # (V,) o
    cost: float                       # TV(o, q)
    scale: float = 1.0
    cells: tuple | None = None        # (p_j(x_j), r_{j-1}(x_j)) as (k,) tensors where the builder has them (points)


_EPS = float(np.float32(1e-12))       # safe_norm's eps as its float32 comparison sees it
LevelAccept = Callable[[int, torch.Tensor, torch.Tensor], tuple[torch.Tensor, float]]   # (j, r, p) -> a, extra


def level_tensors(q: torch.Tensor, laws: list, xs: list, accept: LevelAccept, residual=None) -> Level:
    """The exact walk of one level (see Level) with its numbers left where q lives: b, exact (k,) and cost (0-d)
    tensors, nothing read. q (V,); laws: k draft laws (V,); xs: k tokens; residual: the rule's residual function
    (rules.judge), None for [r - p·a]+."""
    r, reach, out = q, None, None
    b, exact, targets, extras = [], [], [], []
    for j, (p, x) in enumerate(zip(laws, xs)):
        a, extra = accept(j, r, p)
        pa = p * a
        if residual is None:
            bj, ej, nxt = _judge_one(r, p, a, pa, x)
        else:
            jd = rules.judge(r[None], p[None], a[None], torch.tensor([x], device=q.device),
                             torch.ones(1, device=q.device), residual)
            bj, ej, nxt = jd.accept_prob[0], jd.exact_prob[0], jd.residual[0]
        out = pa if out is None else out + reach * pa          # the first term is 0 + 1.0·pa = pa exactly
        kept = (1.0 - pa.sum()).clamp_min(0.0)
        reach = kept if reach is None else reach * kept
        b.append(bj)
        exact.append(ej)
        targets.append(r)
        extras.append(extra)
        r = nxt
    out = r.clone() if out is None else out + reach * r
    stack = (lambda v: torch.stack(v)) if b else (lambda v: torch.zeros(0, device=q.device))    # noqa: E731
    return Level(stack(b), stack(exact), targets, extras, r, out, tv(out, q))


def point_tensors(q: torch.Tensor, laws: list, xs: list, accept: LevelAccept, residual=None, cell=None) -> Level:
    """level_tensors of distinct point-mass siblings (laws: their one-hot rows; the TV-optimal residual), to the same
    bits with only the V-wide work they need: p·a is a(x) at x alone (an acceptance is a probability, finite), so
    each residual, Σ p·a and the output law change at the siblings' cells only. cell(j, r, p) -> (a(x_j), extra):
    the acceptance at x_j alone (a rule's `at`; CASCADE's on its cells, cascade_cell); else accept's row there."""
    if not xs or residual is not None:
        return level_tensors(q, laws, xs, accept, residual)
    r, reach, b, cells, rx, targets, extras = q, None, [], [], [], [], []
    for j, (p, x) in enumerate(zip(laws, xs)):
        if cell is not None:
            a, extra = cell(j, r, p)
        else:
            row, extra = accept(j, r, p)
            a = row[x]
        rx.append(r[x])
        nxt = _point_residual(r, rx[-1], a, x)
        cells.append(a if reach is None else reach * a)          # o at x_j: level_tensors' 0 + reach·p·a there
        kept = (1.0 - a).clamp_min(0.0)
        reach = kept if reach is None else reach * kept
        b.append(a), targets.append(r), extras.append(extra)
        r = nxt
    o, xt, rx = reach * r, torch.tensor(xs, device=q.device), torch.stack(rx)
    o.index_put_((xt,), torch.stack(cells), accumulate=True)   # o[x_j] + cell_j: distinct x_j, one add each
    one = torch.ones_like(rx)
    return Level(torch.stack(b), sampling.exact_at(one, rx), targets, extras, r, o, tv.__wrapped__(o, q),  # o: fresh,
                 cells=(one, rx))                                                                        # no memo



def point_law(q: torch.Tensor, laws: list, xs: list, accept: LevelAccept, residual=None) -> Level:
    """point_tensors with its numbers read (one read); accept: the siblings' acceptance at their cells (`cell`)."""
    return read_level(point_tensors(q, laws, xs, accept, residual, cell=accept))


def level_law(q: torch.Tensor, laws: list, xs: list, accept: LevelAccept, residual=None) -> Level:
    """level_tensors with its numbers read (one read): b, exact, extras lists of floats, cost a float."""
    return read_level(level_tensors(q, laws, xs, accept, residual))


def read_level(lvl: Level) -> Level:
    """A level whose b, exact, cost and extras are tensors (or floats) with all of them read in one read."""
    k = len(lvl.targets)
    parts = [lvl.b, lvl.exact, [lvl.cost], lvl.extras]
    vals = torch.cat([torch.stack([torch.as_tensor(v, dtype=torch.float64) for v in p]) if len(p) else
                      torch.zeros(0, dtype=torch.float64) for p in parts]).tolist()
    return replace(lvl, b=vals[:k], exact=vals[k:2 * k], cost=vals[2 * k], extras=vals[2 * k + 1:])


def _point_residual(r: torch.Tensor, rx: torch.Tensor, a: torch.Tensor, x: int) -> torch.Tensor:
    """The normalised residual [r - p·a]+ of a point mass p at x with acceptance a there (0-d), r(x) = rx already
    read out: p·a is a at x alone, so only r(x) moves (_judge_one's residual to the same bits, fewer ops)."""
    f = r.clone()
    f[x] = (rx - a).clamp_min(0)
    return _normed(f, r)


def _judge_one(r: torch.Tensor, p: torch.Tensor, a: torch.Tensor, pa: torch.Tensor,
               x: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """rules.judge of one sibling (pa = p·a) with the residual [r - p·a]+, in fewer tensor ops and to the same bits:
    (b = a(x), exact = min(1, r(x)/p(x)) (sampling.exact_at), the normalised residual), nothing read."""
    return a[x], sampling.exact_at(p[x], r[x]), _normed((r - pa).clamp_min(0), r)


def _normed(f: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    mass = f.sum()
    return torch.where(mass < _EPS, r, f / mass)    # sampling.safe_norm, one row


def fit_level(build: Callable[[float], Level], left: float, iters: int = 16) -> Level:
    """CASCADE's budget, enforced before deciding: the level built with every sibling's extra mass scaled by one
    factor s in [0, 1], s = 1 when TV(o(1), q) <= left, else the largest s a deterministic bisection finds with
    TV(o(s), q) <= left (s = 0 is the lossless walk, TV 0)."""
    full = build(1.0)
    if full.cost <= left or not any(full.extras):
        return full
    lo, hi, best = 0.0, 1.0, build(0.0)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        lvl = build(mid)
        if lvl.cost <= left:
            lo, best = mid, lvl
        else:
            hi = mid
    return best


GroupFn = Callable[[int, list], CandidateGroup]      # (node, sibling order) -> the node's group


def kid_laws(tree: DraftTree, kids: list, vocab: int, device=None) -> list:
    """The draft law (V,) of each kid: its recorded law, or a point mass at its token (one one-hot for all, made on
    `device`: where the target's laws it meets live)."""
    pm = [c for c in kids if tree.laws[c] is None]
    one = torch.zeros(len(pm), vocab, device=device)          # rules.point_mass's rows, 1.0 put at each token
    one[torch.arange(len(pm)), torch.tensor([tree.tokens[c] for c in pm], dtype=torch.long)] = 1.0
    rows = dict(zip(pm, one))
    return [tree.laws[c].to(device or tree.laws[c].device) if tree.laws[c] is not None else rows[c] for c in kids]


def judge_level(tree: DraftTree, kids: list, q_node: torch.Tensor, accept_fn: AcceptFn, group_fn: GroupFn | None,
                left: float, laws: list | None = None) -> tuple[Level, list]:
    """The level law of `kids` (children of one node, in order) under the method's rule; CASCADE (group_fn) fits
    the level into `left`. laws: the kids' draft laws (kid_laws) when the caller has them. Returns (Level, per-kid
    CandidateGroup)."""
    laws = kid_laws(tree, kids, q_node.shape[0], q_node.device) if laws is None else laws
    xs = [tree.tokens[c] for c in kids]
    residual = getattr(accept_fn, "residual", None)
    if group_fn is None:
        return level_law(q_node, laws, xs, lambda j, r, p: (accept_fn(r[None], p[None])[0], 0.0), residual), \
            [CandidateGroup() for _ in kids]
    groups = [group_fn(c, kids) for c in kids]
    toks = [[tree.tokens[m] for m in g.members] for g in groups]
    return cascade_fit(q_node, laws, xs, toks, left, residual=residual, cells=points(tree, kids)), groups


def cascade_fit(q: torch.Tensor, laws: list, xs: list, members: list, left: float, walk=None, residual=None,
                cells: bool = False) -> Level:
    """CASCADE's level, the one builder (the engine's walks under both noises and the re-scoring, rescore.py): sibling
    j accepted by rules.cascade with its group's tokens members[j], every extra mass scaled by one factor s fitted
    into `left` (fit_level). walk: how a level is walked given each sibling's acceptance, (q, laws, xs, accept,
    residual) -> Level: level_law (the running residual) unless given (keyed noise: keyed.keyed_walk). cells: the
    siblings are distinct point masses (pointlevel.points), so each acceptance is asked at its cell alone
    (pointlevel.cascade_cell) and the default walk is point_law."""
    cells = cells and residual is None
    walk = walk or (point_law if cells else level_law)
    rule = cascade_cell if cells else rules.cascade

    def build(s: float) -> Level:
        lvl = walk(q, laws, xs, lambda j, r, p: rule(r, p, xs[j], members[j], s), residual)
        lvl.scale = s
        return lvl
    return fit_level(build, left)


def sibling_tvs(p: torch.Tensor, q: torch.Tensor, r: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(TV(p, q), TV(p, r)) of one sibling's draft law p (V,), 0-d tensors not read: against the level's target law
    q and against the running residual r (V,) it was judged with (the same tensor, computed once, for the first
    sibling)."""
    d = tv(p, q)
    return d, d if r is q else tv(p, r)
