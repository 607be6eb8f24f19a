"""EAGLE-style drafting (docs/algorithms.md §4): a one-layer head on the target's features proposes a token tree.

Head input at step t: fc([embed(y_{t+1}) + pos(t+1); f_t]) where f_t is the target's final hidden state after
consuming y_t; one decoder block (own KV cache) and a norm give f^_{t+1}; the target's frozen output head turns it
into the draft law of y_{t+2}. Trees: `dynamic` (EAGLE-2: expand the best frontier by cumulative draft
log-probability, keep the best `tree_nodes`), `static` (the top-1 path with `tree_topk` siblings at every level) or
`chain` (width 1).
"""
from __future__ import annotations

import torch

from specviz.core.sampling import target_probs
from specviz.engine.drafters.draft_tree import DraftTree


class HeadDrafter:
    """Runtime drafter (a TreeDrafter, protocols.py) over a trained head and a model boundary (for embeddings and the
    output head). The head is the backend's own (protocols.OffersEagleHead; the scenes one is scenes/drafter.py's
    DraftHead): `inputs`, `block`, `norm` and `new_cache` are all this drafter asks of it."""

    def __init__(self, head, model, cfg, rnd):
        self.head, self.model, self.cfg, self.rnd = head.eval(), model, cfg, rnd    # rnd: engine/randomness.py
        self.cache = head.new_cache()
        self.dev = self.cache[0].device                  # the head's: its inputs, masks and tables are made there
        n = self.cache[0].shape[2]
        self._tril = torch.ones(n, n, dtype=torch.bool, device=self.dev).tril()
        self.length = 0
        self.pending: list[tuple[int, int, torch.Tensor]] = []     # (token, pos, feature before it)
        self.vocab = model.codebook_size
        self.n_pos = model.grid[0] * model.grid[1]

    def observe(self, tokens: list[int], positions: list[int], features: torch.Tensor) -> None:
        """Newly committed tokens with the target features f_{t-1} that precede each of them."""
        self.pending += [(t, p, f) for t, p, f in zip(tokens, positions, features)]

    def _feed(self, tokens, pos, feats, mask, start) -> torch.Tensor:
        """Head forward of (N,) tokens at `pos` with features `feats`, KV written at cache slots start..start+N."""
        x = self.head.inputs(self.model.embed_tokens(tokens), pos, feats)[None]
        return self.head.norm(self.head.block(x, mask, self.cache, start))[0]

    def _law(self, feats: torch.Tensor):
        logits = self.model.output_head(feats)
        c = self.cfg
        return target_probs(logits, c.temperature, c.top_k, c.top_p), logits

    @torch.inference_mode()
    def build(self, root_token: int, root_pos: int) -> DraftTree:
        c = self.cfg
        # 1. commit the pending pairs (the last one is the root) into the head's cache (causal over them)
        n, t = len(self.pending), self.length
        toks, pos, feats = zip(*self.pending)
        out = self._feed(torch.tensor(toks, device=self.dev), torch.tensor(pos, device=self.dev), torch.stack(feats),
                         self._tril[t:t + n, :t + n], t)
        self.length += n
        self.pending = []
        # 2. grow the tree in the scratch region after the cache, one head forward per depth for the whole frontier
        tokens, parents, depths, laws, score = [root_token], [-1], [0], [None], [0.0]
        feat_of = {0: out[-1]}
        scratch: list[int] = []                       # node ids fed to the head, in slot order
        frontier = [0]
        width = 1 if c.tree == "chain" else c.tree_topk
        for depth in range(1, c.tree_depth + 1):
            if root_pos + depth >= self.n_pos or not frontier:
                break
            probs, logits = self._law(torch.stack([feat_of[f] for f in frontier]))
            kids = self._kids(probs, logits, width, root_pos + depth)
            rows = torch.tensor([r for r, ks in enumerate(kids) for _ in ks], dtype=torch.long)
            toks = [tok for ks in kids for tok, _ in ks]
            p_kids = probs[rows, torch.tensor(toks, dtype=torch.long)]
            p_list, logp = p_kids.tolist(), p_kids.log().tolist()      # float32 log, as one 0-d log per kid gave
            new, k = [], 0
            for row, par in enumerate(frontier):
                for tok, law in kids[row]:
                    if p_list[k] > 0:
                        tokens.append(tok), parents.append(par), depths.append(depth), laws.append(law)
                        score.append(score[par] + logp[k])
                        new.append(len(tokens) - 1)
                    k += 1
            if c.tree in ("static", "chain"):         # extend the top path only
                frontier = new[:1]
            else:
                frontier = sorted(new, key=lambda i: -score[i])[:c.tree_topk]
            if depth < c.tree_depth and frontier and root_pos + depth + 1 < self.n_pos:
                self._expand(frontier, tokens, parents, feat_of, scratch, root_pos, depths)
        keep = self._keep(score, parents, laws, c.tree_nodes if c.tree == "dynamic" else len(tokens))
        return _subtree(keep, tokens, parents, depths, laws)

    def _kids(self, probs, logits, width, pos) -> list[list[tuple[int, torch.Tensor | None]]]:
        """Children of every frontier row (at position pos): one top-k over all rows for point masses, else drawn
        row by row."""
        if self.cfg.tree_sampling == "sample" and self.cfg.temperature > 0:
            return [pick_children(probs[r], logits[r], width, self.cfg, self.rnd, pos)
                    for r in range(len(probs))]
        return [[(tok, None) for tok in row] for row in logits.topk(min(width, logits.shape[-1]), -1).indices.tolist()]

    def _expand(self, frontier, tokens, parents, feat_of, scratch, root_pos, depths):
        """Feed the frontier nodes to the head (tree mask over earlier scratch nodes) to get their features."""
        base = len(scratch)
        slot = {nid: i for i, nid in enumerate(scratch)}
        rows = []
        for r, nid in enumerate(frontier):
            row = [False] * (base + len(frontier))
            j = parents[nid]
            while j > 0:
                if j in slot:
                    row[slot[j]] = True
                j = parents[j]
            row[base + r] = True
            rows.append(row)
        mask = torch.cat([self._tril[:len(frontier), :1].expand(-1, self.length), torch.tensor(rows, device=self.dev)],
                         1)
        toks = torch.tensor([tokens[i] for i in frontier], device=self.dev)
        pos = torch.tensor([root_pos + depths[i] for i in frontier], device=self.dev)
        feats = torch.stack([feat_of[parents[i]] for i in frontier])
        out = self._feed(toks, pos, feats, mask, self.length + base)
        for r, nid in enumerate(frontier):
            feat_of[nid] = out[r]
            scratch.append(nid)

    @classmethod
    def _keep(cls, score, parents, laws, limit):
        """Nodes kept of a grown tree: by score for point-mass children, by draw order for sampled ones (_prune)."""
        if all(law is None for law in laws):
            return cls._prune(score, parents, limit)
        return list(range(min(len(score), limit + 1)))          # node ids are in draw order, breadth first

    @staticmethod
    def _prune(score, parents, limit):
        """EAGLE-2: keep the `limit` best nodes by cumulative draft log-probability (ancestor-closed). Only for
        point-mass children: a score cut over SAMPLED siblings keeps a child depending on its drawn value, so the kept
        child is no longer distributed as its recorded law (not lossless). Sampled trees keep the first `limit` nodes
        in draw order instead (breadth first; each node keeps a prefix of its children, independent of their values)."""
        order = sorted(range(1, len(score)), key=lambda i: -score[i])[:max(0, limit)]
        keep = {0}
        for i in order:                                  # ancestor-closed
            while i not in keep:
                keep.add(i)
                i = parents[i]
        return sorted(keep)


def pick_children(probs: torch.Tensor, ranking: torch.Tensor, width: int, cfg, rnd,
                  pos: int = -1) -> list[tuple[int, torch.Tensor | None]]:
    """Children of one node at position pos: `width` tokens drawn without replacement from probs by the run's
    randomness `rnd` (engine/randomness.py), each with the law it was drawn from (EAGLE-1, exact by P3), or the
    top-`width` of `ranking` as point masses (EAGLE-2, P2)."""
    if cfg.tree_sampling == "sample" and cfg.temperature > 0:
        law, out = probs.clone(), []
        for tok in rnd.children(pos, probs, width):
            out.append((tok, law / law.sum()))
            law = law.clone()
            law[tok] = 0
        return out
    return [(int(t), None) for t in ranking.topk(min(width, ranking.shape[-1])).indices]


def _subtree(keep, tokens, parents, depths, laws) -> DraftTree:
    """Re-index kept nodes breadth-first (parents precede children)."""
    keep = sorted(keep, key=lambda i: (depths[i], i))
    new = {old: k for k, old in enumerate(keep)}
    return DraftTree([tokens[i] for i in keep], [new.get(parents[i], -1) for i in keep], [depths[i] for i in keep],
                [laws[i] for i in keep])
