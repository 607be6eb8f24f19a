"""CASCADE groups from the verification forward's target hidden states (design.md §3)."""
from __future__ import annotations

import torch


def cascade_groups(tree, hidden: torch.Tensor, cfg):
    """CASCADE groups from the verification forward's hidden states (design.md §3).
    I(n): siblings (or same-level nodes) m with cos(h_m, h_n) >= tau_pos; C(n): siblings m such that some child of
    m and some child of n have cos >= tau_seq. Returns group_fn(node, sibling order) -> (members, info)."""
    h = torch.nn.functional.normalize(hidden.float(), dim=-1)
    cos = h @ h.T                                                                  # (N, N)

    def group_fn(node: int, kids: list) -> tuple[list, dict]:
        if cfg.cascade_scope == "level":
            cands = [m for m in range(1, len(tree.tokens)) if tree.depths[m] == tree.depths[node] and m != node]
        else:
            cands = [m for m in kids if m != node]
        inter = [m for m in cands if cos[node, m] >= cfg.tau_pos]
        conv = []
        for m in cands:
            a, b = tree.children[node], tree.children[m]
            if a and b and float(cos[a][:, b].max()) >= cfg.tau_seq:
                conv.append(m)
        sims = {m: float(cos[node, m]) for m in cands}
        child = {m: (float(cos[tree.children[node]][:, tree.children[m]].max())
                     if tree.children[node] and tree.children[m] else -1.0) for m in cands}
        return sorted(set(inter) | set(conv)), {"inter": inter, "conv": conv, "cos": sims, "child_cos": child}
    return group_fn
