"""CASCADE groups from the verification forward's target hidden states (docs/design.md §3, docs/methods_trees.md).

h_n is the target's last hidden state after consuming node n's token (row n of the verification forward).
Two readings, knob `cascade_sets`:
- "paper" (default): I(n) = nodes m at n's tree level with cos(h_m, h_n) >= τ_pos; C(n) = nodes m at level d - 1 or
  d + 1 (the root is level 0) with cos(h_m, h_n) >= τ_seq.
- "siblings" (our earlier, narrower reading): I(n) = same-parent siblings with cos >= τ_pos; C(n) = siblings m such
  that some child of m and some child of n have cos >= τ_seq.
Either way the rule adds, once per distinct token t of I(n) ∪ C(n) other than x_n, the target mass at n's position on
t (rules.cascade): a member's token is a code, and q_R must be a mass of the law at the position being decided.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from specviz.core.sampling import exact_at
from specviz.engine import rules

READINGS = {
    "paper": "I(n): nodes at n's tree level with cos(h) ≥ τ_pos; C(n): nodes one level up or down with cos(h) ≥ "
             "τ_seq; q_R(x) = q(x) + Σ q(t) over the distinct other tokens t of I ∪ C, q at x's position",
    "siblings": "I(n): same-parent siblings with cos(h) ≥ τ_pos; C(n): siblings whose children have cos(h) ≥ τ_seq "
                "with n's children (narrower than the paper)",
}


@dataclass(frozen=True)
class CandidateGroup:
    """One candidate n's relaxation group, as a group_fn answers it (no group: every field empty). cos and
    child_cos cover every candidate m the reading looked at (the trace's Sibling records; the preview re-derives
    the groups from them)."""
    members: list = field(default_factory=list)     # sorted member nodes: I(n) ∪ C(n)
    inter: list = field(default_factory=list)       # I(n), the interchangeable set
    conv: list = field(default_factory=list)        # C(n), the convergent set
    cos: dict = field(default_factory=dict)         # m -> cos(h_m, h_n)
    child_cos: dict = field(default_factory=dict)   # m -> the largest cosine between their children, or -1


class Groups:
    """CASCADE's group_fn(node, sibling order) -> CandidateGroup of one tree (cascade_groups). The cosines stay where
    the hidden states live (`cos_t`) until the walk's first read brings them (`settle`; a call before that reads them
    itself); `masks` forms the groups of one level's kids from them where they live, with no read."""

    def __init__(self, tree, hidden: torch.Tensor, cfg):
        h = torch.nn.functional.normalize(hidden.float(), dim=-1)
        self.cos_t, self.tree, self.cfg, self._cos = h @ h.T, tree, cfg, None          # (N, N)

    def settle(self, vals: list) -> None:
        """The cosines' values read back (cos_t flattened, as floats)."""
        n = len(self.tree.tokens)
        self._cos = [vals[i * n:(i + 1) * n] for i in range(n)]

    def cos(self) -> list:
        if self._cos is None:
            self._cos = self.cos_t.tolist()                                            # a read of its own
        return self._cos

    def candidates(self, node: int, kids: list) -> list:
        """The nodes the reading looks at for `node` (its group's `cos` keys, in order), from the tree alone."""
        depth, nodes = self.tree.depths, range(len(self.tree.tokens))
        if self.cfg.cascade_sets == "paper":
            d = depth[node]
            return [m for m in nodes if depth[m] == d and m != node] + [m for m in nodes if abs(depth[m] - d) == 1]
        return [m for m in kids if m != node]

    def __call__(self, node: int, kids: list) -> CandidateGroup:
        cos, kids_of, depth = self.cos(), self.tree.children, self.tree.depths
        cands = self.candidates(node, kids)
        if self.cfg.cascade_sets == "paper":
            child = {m: -1.0 for m in cands}
        else:
            child = {m: max(cos[i][j] for i in kids_of[node] for j in kids_of[m]) if kids_of[node] and kids_of[m]
                     else -1.0 for m in cands}
        inter, conv = cascade_sets(self.cfg.cascade_sets, depth[node],
                                   [(m, depth[m], cos[node][m], child[m]) for m in cands], self.cfg.tau_pos,
                                   self.cfg.tau_seq)
        sims = {m: cos[node][m] for m in cands}
        return CandidateGroup(members=sorted(set(inter) | set(conv)), inter=inter, conv=conv, cos=sims, child_cos=child)

    def masks(self, kids: list) -> tuple[torch.Tensor, torch.Tensor]:
        """(the tree's distinct tokens (C,), (k, C) float 1/0: kid j's group holds a node with that token, its own
        token left out): the groups of one level's kids (siblings) formed where the cosines live, by cascade_sets'
        tests compared in float64 as the host compares the read values; nothing read."""
        tree, cfg, dev = self.tree, self.cfg, self.cos_t.device
        toks = sorted(set(tree.tokens))
        at, n, k = {t: i for i, t in enumerate(toks)}, len(tree.tokens), len(kids)
        rows = self.cos_t[torch.tensor(kids, device=dev)].double()                    # (k, N)
        if cfg.cascade_sets == "paper":
            d, depth = tree.depths[kids[0]], tree.depths
            same = torch.tensor([[depth[m] == d and m != c for m in range(n)] for c in kids], device=dev)
            adj = torch.tensor([abs(depth[m] - d) == 1 for m in range(n)], device=dev)
            member = (same & (rows >= cfg.tau_pos)) | (adj & (rows >= cfg.tau_seq))
        else:
            sib = torch.tensor([[m in kids and m != c for m in range(n)] for c in kids], device=dev)
            cc = torch.full((k, n), -1.0, dtype=torch.float64, device=dev)
            cc[:, kids] = _child_cos(tree, kids, self.cos_t.double())
            member = sib & ((rows >= cfg.tau_pos) | ((cc > -1.0) & (cc >= cfg.tau_seq)))
        onehot = torch.tensor([[float(at[t] == i) for i in range(len(toks))] for t in tree.tokens], device=dev)
        other = torch.tensor([[float(t != tree.tokens[c]) for t in toks] for c in kids], device=dev)
        return torch.tensor(toks, device=dev), ((member.float() @ onehot) > 0) * other

    def exact(self, kids: list) -> bool:
        """Whether `masks`' level has the bits of the host groups' (cascade_masked): every kid's group (read) holds
        at most two distinct tokens other than its own (two masses and zeros add to one rounding in any order)."""
        tokens = self.tree.tokens
        return all(len({tokens[m] for m in self(c, kids).members} - {tokens[c]}) <= 2 for c in kids)


def _child_cos(tree, kids: list, c64: torch.Tensor) -> torch.Tensor:
    """(k, k) float64: the largest cosine between a child of kid i and a child of kid j, -1 where either has none."""
    kids_of, dev = tree.children, c64.device
    width = max(len(kids_of[c]) for c in kids)
    if not width:
        return torch.full((len(kids), len(kids)), -1.0, dtype=torch.float64, device=dev)
    idx = torch.tensor([kids_of[c] + [0] * (width - len(kids_of[c])) for c in kids], device=dev)      # (k, w)
    ok = torch.tensor([[i < len(kids_of[c]) for i in range(width)] for c in kids], device=dev)
    sub = c64[idx[:, :, None, None], idx[None, None]].masked_fill(~(ok[:, :, None, None] & ok[None, None]), -2.0)
    has = ok.any(1)
    return torch.where(has[:, None] & has[None], sub.amax((1, 3)), -1.0)


def cascade_groups(tree, hidden: torch.Tensor, cfg) -> Groups:
    """Returns group_fn(node, sibling order) -> the node's CandidateGroup (a Groups)."""
    return Groups(tree, hidden, cfg)


def cascade_masked(r: torch.Tensor, p: torch.Tensor, x: int, cand: torch.Tensor, mask: torch.Tensor, scale: float,
                   cell: bool = False):
    """rules.cascade (cell: pointlevel.cascade_cell, a(x) alone) with the group as a mask over the tree's distinct
    tokens `cand` (Groups.masks: no read): the extra mass s·Σ_t mask(t)·r(t) is the host groups' sum to the same bits
    whenever the group holds at most two such tokens (Groups.exact). -> (a, extra 0-d where r lives)."""
    extra = scale * (r[cand] * mask).sum()
    rx, px = r[x], p[x]
    a = exact_at(px, rx, off=1.0) if cell else rules.lossless(r[None], p[None])[0]      # lossless: exact_at's cells
    new = torch.where((extra > 0) & (px > 0), ((rx + extra) / px).clamp(max=1.0), a if cell else a[x])
    if cell:
        return new, extra
    a[x] = new
    return a, extra


def cascade_sets(sets: str, level: int, cands, tau_pos: float, tau_seq: float) -> tuple[list, list]:
    """CASCADE's sets of a node at tree `level` among its candidates (node, level, cos, child cos), in their order:
    (I(n), C(n)). paper: I = candidates at the node's level with cos >= τ_pos, C = candidates one level up or down
    with cos >= τ_seq; siblings: I = cos >= τ_pos, C = largest child cosine >= τ_seq (-1: a branch without children,
    which converges with nothing). The engine (cascade_groups) and the preview (rescore.cascade_group) both ask this."""
    if sets == "paper":
        return ([m for m, lv, c, _ in cands if lv == level and c >= tau_pos],
                [m for m, lv, c, _ in cands if abs(lv - level) == 1 and c >= tau_seq])
    return ([m for m, _, c, _ in cands if c >= tau_pos], [m for m, _, _, cc in cands if cc > -1.0 and cc >= tau_seq])
