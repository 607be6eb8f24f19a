"""SJD-PAC's tree and its carries (drafters/pac.py): the tree's shape (K-ary part plus the first-candidate chain),
the tree built from the levels' candidates, and the adaptive continuation's carries after a walk. Structure only: the
draws are pac.py's."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.engine.drafters.draft_tree import DraftTree


def tree_nodes(width: int, depth: int) -> int:
    """Nodes of the full K-ary part, root included: 1 + K + ... + K^(D-1)."""
    return sum(width ** i for i in range(depth))


def path_length(window: int, width: int, depth: int) -> int:
    """M = D + (window - tree_nodes): nodes on the longest (first-candidate) path, root included."""
    return depth + window - tree_nodes(width, depth)


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


def continuation(tree: DraftTree, main: list[int], path: list[int], q: torch.Tensor) -> list[Carry]:
    """Carries for the positions after the new token, from this step's tree and laws q (N, V).
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
