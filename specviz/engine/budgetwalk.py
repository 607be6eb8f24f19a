"""CASCADE's levels of one walk in two reads while they fit the budget unscaled (treewalk.verify_tree and
keyed.keyed_tree with a group_fn).

1. The root's level: its kids' groups formed where the cosines live (groups.Groups.masks), the level at s = 1
   (levelpack.cascade_full) packed with its budget test (levelpack.fit_part), its siblings' Sibling masses
   (levelpack.member_masses) and the cosines themselves: ONE read, after which the host has every group
   (Groups.settle). A root kid whose group holds more than two distinct other tokens (Groups.exact) has its level
   built again from the read groups (one more read), so the extra masses keep the host sum's bits.
2. When the walk goes on into a kid with children: every level of that kid's subtree (levelpack.walkable) at s = 1
   with its budget test against what its own path leaves of the budget (path_lefts: a node's path from the root is
   unique, so what the levels above it spent is known per node where q lives) and its Sibling masses: ONE read.
Only a level whose test fails (the budget must scale it) is fitted as before (`refit`: verify.fit_level's reads,
one per build, then packed again: one more), and the walk's next subtree is read anew from what that level spent.
A group_fn without `masks` (a plain callable) has its root level read with its groups asked on the host."""
from __future__ import annotations

from typing import Callable

import torch

from specviz.engine.groups import CandidateGroup
from specviz.engine.levelpack import fit_part, member_masses, read_ahead, walkable


def path_lefts(tree, nodes: list, budget: float, used: float, costs: dict, device=None) -> dict:
    """{node: budget - what the walk has spent on arriving there} as float64 0-d tensors where the costs live, for
    `nodes` (walkable: parents first, the walk now at nodes[0] having spent `used`): each level's cost (costs:
    node -> its 0-d cost at s = 1) added in path order, the host's `used + cost` in the same float64 steps."""
    spent = {nodes[0]: torch.tensor(used, dtype=torch.float64, device=device)}
    for c in nodes[1:]:
        par = tree.parents[c]
        spent[c] = spent[par] + torch.as_tensor(costs[par], device=device).to(torch.float64)
    return {c: budget - spent[c] for c in nodes}


class BudgetLevels:
    """The walk's CASCADE levels (see the module). build(node, groups, u, masks) -> (the level's pack tensor, its
    Level at s = 1 or None without kids); value(node, list) -> its values read back (with .cost); refit(node, left,
    u) -> (values, Level, groups): the fitted level, read; uniforms(nodes) -> {node: its uniforms or None}, drawn
    as the walk would on arriving there; masses: the walk's Sibling masses, filled level by level."""

    def __init__(self, tree, q, group_fn, budget: float, build: Callable, value: Callable, refit: Callable,
                 uniforms: Callable, masses: dict):
        self.tree, self.q, self.group_fn, self.budget, self.masses = tree, q, group_fn, budget, masses
        self.build, self.value, self.refit, self.uniforms, self.values = build, value, refit, uniforms, {}

    def at(self, cur: int, used: float) -> tuple:
        """(values, Level (None without kids), groups, extras) of the walk's level at `cur`, having spent `used`."""
        kids = self.tree.children[cur]
        if cur not in self.values:
            root = not self.values and cur == 0 and hasattr(self.group_fn, "masks") and bool(kids)
            self.values = self._read([cur] if cur == 0 else walkable(self.tree, cur), used, root)
            if root and not self.group_fn.exact(kids):          # the groups' sums: the host's bits (one more read)
                self.values = self._read([cur], used, False)
        v, lvl, extras, fits, masses, u = self.values[cur]
        self.masses.update(masses)
        groups = [self.group_fn(c, kids) for c in kids]
        if fits:
            return v, lvl, groups, extras
        self.values = {}                                         # the levels below spend from the fitted level
        v, lvl, groups = self.refit(cur, self.budget - used, u)
        return v, lvl, groups, lvl.extras

    def _read(self, nodes: list, used: float, root: bool) -> dict:
        """Every level of `nodes` at s = 1 with its budget test and Sibling masses in ONE read (root: the root's
        level with device groups and the cosines)."""
        tree, us, parts, built, dev = self.tree, self.uniforms(nodes), {}, {}, self.q.device
        for c in nodes:
            kids = tree.children[c]
            groups = ([CandidateGroup(cos=dict.fromkeys(self.group_fn.candidates(m, kids))) for m in kids] if root
                      else [self.group_fn(m, kids) for m in kids])
            pack, lvl = self.build(c, groups, us[c], self.group_fn.masks(kids) if root else None)
            built[c] = (pack, lvl, member_masses(tree, c, groups, self.q[c]) if kids else ([], None))
        lefts = path_lefts(tree, nodes, self.budget, used, {c: b[1].cost if tree.children[c] else 0.0
                                                           for c, b in built.items()}, dev)
        for c, (pack, lvl, (_, mq)) in built.items():
            parts[c] = torch.cat([pack, fit_part(lvl, lefts[c]), mq]) if tree.children[c] else pack
        if root:
            parts[-1] = self.group_fn.cos_t.flatten().to(torch.float64)
        vals = read_ahead(parts)
        if root:
            self.group_fn.settle(vals.pop(-1))
        out = {}
        for c, (pack, lvl, (keys, _)) in built.items():
            n, k = pack.numel(), len(tree.children[c])
            v = vals[c]
            fits = not k or bool(v[n + k])
            out[c] = (self.value(c, v[:n]), lvl, v[n:n + k], fits, dict(zip(keys, v[n + k + 1:])), us[c])
        return out
