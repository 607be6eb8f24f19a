"""SJD-PAC's tree and its carries (drafters/pac.py): the tree built from the levels' candidates (the K-ary part plus
the first-candidate chain), the adaptive continuation's carries after a walk, and the rider that has
the next candidates of every end of the walk drawn with its reads (LevelsAhead). No draws here: those are pac.py's
(levels_rows, through the run's randomness)."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.engine.drafters.draft_tree import DraftTree


@dataclass
class Carry:
    """What the last forward leaves for one upcoming position: the old first-candidate draft x with its law pi
    (x = -1: none) and the stale target law there (None: none)."""
    x: int = -1
    pi: torch.Tensor | None = None
    law: torch.Tensor | None = None


def build_tree(root: int, levels: list[tuple[list[int], list[torch.Tensor]]]) -> tuple[DraftTree, list[int]]:
    """levels[d-1] = (tokens, laws) of the candidates at depth d. The first min(D-1, ...) levels that hold several
    candidates branch under every node of the level above; single-candidate levels extend the first-candidate path.
    Returns the tree and its main path (node ids of the first candidates, root first)."""
    tokens, parents, depths, laws = [root], [-1], [0], [None]
    frontier, main = [0], [0]
    for d, (toks, lws) in enumerate(levels, start=1):
        under = frontier if len(toks) > 1 or len(frontier) == 1 else [main[-1]]
        nxt = []
        for par in under:
            for j, (t, law) in enumerate(zip(toks, lws)):
                nxt.append(len(tokens))
                if par == main[-1] and j == 0:
                    main.append(len(tokens))
                tokens.append(t)
                parents.append(par)
                depths.append(d)
                laws.append(law)
        frontier = nxt if len(toks) > 1 else [main[-1]]
    return DraftTree(tokens, parents, depths, laws), main


def continuation(tree: DraftTree, main: list[int], path: list[int], q) -> list[Carry]:
    """Carries for the positions after the new token, from this step's tree and laws q (N, V), or q's rows.
    The walk starts at the last accepted node v and follows first children (v's first child is the rejected or
    untested candidate 0 at the new token's position), jumping to the main path when a branch ends; position i
    past the new token gets the walk's node there as its old draft and q at the node before it as its stale law."""
    chain, node = [path[-1]], path[-1]
    while True:
        kids = tree.children[node]
        level = tree.depths[node] + 1
        node = kids[0] if kids else (main[level] if level < len(main) else -1)
        if node < 0:
            break
        chain.append(node)
    out = []
    for i in range(2, len(chain) + 1):                   # chain[1] sits at the new token's position
        prev = chain[i - 1]
        if i < len(chain):
            out.append(Carry(tree.tokens[chain[i]], tree.laws[chain[i]], q[prev]))
        else:
            out.append(Carry(law=q[prev]))
    return out


class LevelsAhead:
    """The next propose's candidates for every way this step's walk can end, drawn where q lives and read with the
    walk's level reads (DraftTree.rider, levelpack.Ahead), so the propose itself reads nothing. A walk ends at node v
    when v's level rejects every kid (a resampled token follows v) or v is a leaf accepted with a bonus token; both
    are decided on the level of v or of v's parent, so node's level carries the ends at node and at its leaf kids.
    The next step then starts at n + depth(v) + 1 with the carries continuation(tree, main, [.., v], q) gives; `src`
    (randomness: PapersAhead, KeyedAhead) draws them as the propose would (levels_t) and reads them back
    (levels_of)."""

    def __init__(self, drafter, tree: DraftTree, q: torch.Tensor, n: int, src):
        self.d, self.tree, self.q, self.n, self.src = drafter, tree, q, n, src
        self.got: dict = {}                                  # end node -> (next n, carries, widths, values)
        self.plans: dict = {}                                # level node -> [(end node, next n, carries, widths, size)]
        self.jobs: dict = {}                                 # level node -> its ends' jobs, planned, not drawn yet
        self.blank = q.new_empty(0, dtype=torch.float64)     # pack's stand-in until `drawn`
        self.rows: tuple | None = None                       # q's rows (one unbind, not a select per carry)

    def pack(self, node: int) -> torch.Tensor | None:
        """Plans the candidates of the next steps after the walk's ends decided on node's level (None: none to
        draw); their float64 vector is `drawn`'s, with every level of the same read (blank until then)."""
        ends = [node] + [c for c in self.tree.children[node] if not self.tree.children[c]]
        jobs, self.rows = [], self.q.unbind(0) if self.rows is None else self.rows
        for v in ends:
            n_next = self.n + self.tree.depths[v] + 1
            carries, widths = self.d.plan(continuation(self.tree, self.d.main, [v], self.rows), n_next)
            if widths:
                jobs.append((v, n_next, carries, widths))
        self.plans[node] = []
        if jobs:
            self.jobs[node] = jobs
        return self.blank if jobs else None

    def drawn(self, rides: dict) -> dict:
        """{(node,): pack(node)} of one read -> the same with every planned level's vector: all their ends drawn at
        once (src.levels_ends), each level's part a slice of one float64 vector where q lives."""
        nodes = [c for (c,) in rides if c in self.jobs]
        if not nodes:
            return rides
        counts = [len(self.jobs[c]) for c in nodes]
        jobs = [job for c in nodes for job in self.jobs.pop(c)]
        vals, sizes = self.src.levels_ends(jobs, self.d.uniform)
        starts = [sum(counts[:i]) for i in range(len(counts))]
        parts = vals.to(self.q.device, torch.float64).split([sum(sizes[a:a + k]) for a, k in zip(starts, counts)])
        out = dict(rides)
        for c, a, k, part in zip(nodes, starts, counts, parts):
            self.plans[c] = [job + (size,) for job, size in zip(jobs[a:a + k], sizes[a:a + k])]
            out[(c,)] = part
        return out

    def take(self, node: int, vals: list) -> None:
        """pack(node)'s values read back, kept by end node."""
        at = 0
        for v, n_next, carries, widths, size in self.plans[node]:
            self.got[v] = (n_next, carries, widths, vals[at:at + size])
            at += size

    def after(self, end: int) -> tuple | None:
        """(next n, levels_of -> the next propose's levels) of the walk ended at `end`; None when not drawn."""
        if end not in self.got:
            return None
        n_next, carries, widths, vals = self.got[end]
        src, uniform = self.src, self.d.uniform                  # not self: the drafter keeps no cycle through it
        return n_next, lambda: src.levels_of(vals, n_next, carries, uniform, widths)
