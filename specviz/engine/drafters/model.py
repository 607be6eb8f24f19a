"""A second, smaller AR model as the drafter (e.g. Janus-Pro-1B drafting for 7B), through the same model boundary.

Shapes: `chain` (one path of tree_depth drafts) or `static`/`dynamic` (the top path with tree_topk siblings at every
level). Children are sampled without replacement from the draft model's law (tree_sampling=sample, exact P3) or
taken as top-k point masses (P2). The draft model keeps its own KV cache: committed tokens are fed once; the
speculative path is re-fed from the root at each level and dropped again (commit of nothing).
"""
from __future__ import annotations

import torch

from specviz.core.sampling import target_probs
from specviz.engine.drafters.draft_tree import DraftTree
from specviz.engine.drafters.tree import pick_children


class ModelDrafter:
    def __init__(self, draft, cfg, rnd):
        self.draft, self.cfg, self.rnd = draft, cfg, rnd                # rnd: the run's randomness (randomness.py)
        self.state = None
        self.pending: list[tuple[int, int]] = []                  # committed (token, pos) not yet in the cache

    def observe(self, tokens: list[int], positions: list[int], features=None) -> None:
        self.pending += list(zip(tokens, positions))

    def _law(self, logits: torch.Tensor) -> torch.Tensor:
        """Draft law where the draft model put it (a sampled kid keeps it as its law; the rules meet it with the
        target's laws on the target's device: verify.kid_laws moves it there when the two differ)."""
        c = self.cfg
        return target_probs(logits.float(), c.temperature, c.top_k, c.top_p)

    def _children(self, law: torch.Tensor, width: int, pos: int) -> list[tuple[int, torch.Tensor | None]]:
        return pick_children(law, law, width, self.cfg, self.rnd, pos)

    @torch.inference_mode()
    def build(self, root_token: int, root_pos: int) -> DraftTree:
        c = self.cfg
        if self.state is None:
            self.state = self.draft.prefill(c.prompt, c.cfg_scale).state
        n_pos = self.draft.grid[0] * self.draft.grid[1]
        toks = torch.tensor([t for t, _ in self.pending])
        pos = torch.tensor([p for _, p in self.pending])
        logits, _ = self.draft.forward(self.state, toks, pos)
        self.draft.commit(self.state, torch.arange(len(toks)))
        self.pending = []
        law = self._law(logits[-1])
        tokens, parents, depths, laws = [root_token], [-1], [0], [None]
        width = 1 if c.tree == "chain" else c.tree_topk
        spine, parent = [], 0                                      # the top path, fed from the root each level
        for depth in range(1, c.tree_depth + 1):
            if root_pos + depth >= n_pos:
                break
            kids = self._children(law, width, root_pos + depth)
            first = len(tokens)
            for tok, kid_law in kids:
                tokens.append(tok), parents.append(parent), depths.append(depth), laws.append(kid_law)
            parent = first
            spine.append(tokens[first])
            if depth == c.tree_depth or root_pos + depth + 1 >= n_pos:
                break
            logits, _ = self.draft.forward(self.state, torch.tensor(spine),
                                           torch.arange(root_pos + 1, root_pos + 1 + len(spine)))
            self.draft.commit(self.state, torch.arange(0))
            law = self._law(logits[-1])
        return DraftTree(tokens, parents, depths, laws)
