"""The draft tree, the record a tree drafter (protocols.TreeDrafter) hands the verifier: below both, so the drafters
never import verification."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch


@dataclass
class DraftTree:
    """A draft tree: what a tree drafter builds and the verifier walks (engine/verify.py, engine/keyed.py).
    Node 0 is the root (the newest committed token, no KV yet); parents precede children."""
    tokens: list[int]
    parents: list[int]
    depths: list[int]
    laws: list                        # per node: (V,) law the node was drawn from, or None for a point mass
    children: list = field(default_factory=list)
    # what the walk's level reads carry for the drafter (levelpack.Ahead): rider.pack(node) -> a float64 vector where
    # q lives, or None, read with node's level; rider.drawn({(node,): pack}) -> the same with the vectors of all the
    # read's levels made at once; rider.take(node, values) gets it back (pac.LevelsAhead); None: nothing
    rider: object = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        self.children = [[] for _ in self.tokens]
        for i, par in enumerate(self.parents):
            if par >= 0:
                self.children[par].append(i)

    def mask(self) -> torch.Tensor:
        """(N, N) bool: row i sees itself and its ancestors (ancestor_rows, built in one array: no nested lists)."""
        rows = np.eye(len(self.parents), dtype=bool)
        for i, par in enumerate(self.parents):
            if par >= 0:
                rows[i] |= rows[par]
        return torch.from_numpy(rows)


def ancestor_rows(parents: list[int]) -> list[list[bool]]:
    """Row i: True at i and at each of its ancestors (parents precede children), as nested lists for ONE tensor."""
    rows: list[list[bool]] = []
    for i, par in enumerate(parents):
        row = rows[par].copy() if par >= 0 else [False] * len(parents)
        row[i] = True
        rows.append(row)
    return rows
