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


def cascade_groups(tree, hidden: torch.Tensor, cfg):
    """Returns group_fn(node, sibling order) -> the node's CandidateGroup."""
    h = torch.nn.functional.normalize(hidden.float(), dim=-1)
    cos = (h @ h.T).tolist()                                                       # (N, N)
    kids_of, depth = tree.children, tree.depths
    nodes = range(len(tree.tokens))

    def child_cos(n: int, m: int) -> float:
        a, b = kids_of[n], kids_of[m]
        return max(cos[i][j] for i in a for j in b) if a and b else -1.0

    def group_fn(node: int, kids: list) -> CandidateGroup:
        d = depth[node]
        if cfg.cascade_sets == "paper":
            cands = [m for m in nodes if depth[m] == d and m != node] + [m for m in nodes if abs(depth[m] - d) == 1]
            child = {m: -1.0 for m in cands}
        else:
            cands = [m for m in kids if m != node]
            child = {m: child_cos(node, m) for m in cands}
        inter, conv = cascade_sets(cfg.cascade_sets, d, [(m, depth[m], cos[node][m], child[m]) for m in cands],
                                   cfg.tau_pos, cfg.tau_seq)
        sims = {m: cos[node][m] for m in cands}
        return CandidateGroup(members=sorted(set(inter) | set(conv)), inter=inter, conv=conv, cos=sims, child_cos=child)
    return group_fn


def cascade_sets(sets: str, level: int, cands, tau_pos: float, tau_seq: float) -> tuple[list, list]:
    """CASCADE's sets of a node at tree `level` among its candidates (node, level, cos, child cos), in their order:
    (I(n), C(n)). paper: I = candidates at the node's level with cos >= τ_pos, C = candidates one level up or down
    with cos >= τ_seq; siblings: I = cos >= τ_pos, C = largest child cosine >= τ_seq (-1: a branch without children,
    which converges with nothing). The engine (cascade_groups) and the preview (rescore.cascade_group) both ask this."""
    if sets == "paper":
        return ([m for m, lv, c, _ in cands if lv == level and c >= tau_pos],
                [m for m, lv, c, _ in cands if abs(lv - level) == 1 and c >= tau_seq])
    return ([m for m, _, c, _ in cands if c >= tau_pos], [m for m, _, _, cc in cands if cc > -1.0 and cc >= tau_seq])
