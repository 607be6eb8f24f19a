"""DraftTree.mask (the tree attention mask of the verification forward) is ancestor_rows as one tensor: row i sees
itself and its ancestors, for random trees whose parents precede their children."""
import random

import torch

from specviz.engine.drafters.draft_tree import DraftTree, ancestor_rows


def test_mask_is_the_ancestor_rows():
    for seed in range(100):
        rng = random.Random(seed)
        n = rng.randint(1, 40)
        parents = [-1] + [rng.randrange(i) for i in range(1, n)]
        mask = DraftTree(list(range(n)), parents, [0] * n, [None] * n).mask()
        assert mask.dtype == torch.bool and torch.equal(mask, torch.tensor(ancestor_rows(parents)))
        for i, par in enumerate(parents):                 # and ancestor_rows is what it says
            seen = {i}
            while par >= 0:
                seen.add(par)
                par = parents[par]
            assert mask[i].nonzero().view(-1).tolist() == sorted(seen)
