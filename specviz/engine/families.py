"""Drafter families: one `step()` per family behind one small interface; decode.py is the one loop that calls it.

A family turns the committed tokens into one verification step: propose drafts, run ONE target forward, judge the
drafts with the method's rule, commit the kept KV rows, and return the new tokens with the step's trace records.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

from specviz.core.records import Drafted
from specviz.core.sampling import target_laws
from specviz.engine.clock import ForwardClock
from specviz.engine.drafters.draft_tree import DraftTree
from specviz.engine.drafters.jacobi import JacobiDrafter
from specviz.engine.drafters.pac import PACDrafter
from specviz.engine.drafters.protocols import ChainDrafter, DrafterFactory, TreeBuilder, TreeDrafter
from specviz.engine.events import chain_pack, chain_record, simple_pack, simple_record, tree_events
from specviz.engine.randomness import Keyed, Papers
from specviz.engine.registry import Method, RunConfigBase
from specviz.engine.target import Model
from specviz.engine.verify import TreeWalk


@dataclass
class Ctx:
    """What every step of one run shares. accept_fn: the method's vectorised rule (q, p) -> a; rnd: the run's
    randomness (engine/randomness.py: the papers' generator or the keyed noise), asked for every draw."""
    model: Model
    cfg: RunConfigBase                                # the run's engine.config.RunConfig
    method: Method
    rnd: Papers | Keyed
    accept_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    n_pos: int
    record: bool
    clock: ForwardClock = field(default_factory=ForwardClock)     # the run's seconds inside the target's forwards

    def forward(self, state, tokens: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor | None = None):
        """The target's forward (models/base.py's boundary), timed by the run's clock."""
        return self.clock.run(self.model.forward, state, tokens, positions, mask)


@dataclass
class StepOut:
    new: list                        # tokens committed by this step, in raster order
    events: list = field(default_factory=list)      # TokenEvents (empty when not recording)
    drafted: list = field(default_factory=list)     # Drafted records: what was fed / proposed


def host(t: torch.Tensor) -> torch.Tensor:
    """Model outputs -> float32 on the CPU, where the sampler's generator, the drafts and the rules live
    (a no-op for CPU models; a (N, V) copy per forward for a model on CUDA)."""
    return t.float().cpu()


class Family:
    """The interface. `start` sees the first committed token and the prefill's hidden state; `step` does one
    verification step for the committed prefix (len(committed) < n_pos)."""
    needs_drafter = False
    drafts = True                    # proposes drafts a rule judges (AR: no, so its runs make only ar decisions)

    def __init__(self, ctx: Ctx, drafter_factory: DrafterFactory | None = None):
        self.ctx = ctx

    def start(self, committed: list, hidden0: torch.Tensor) -> None:
        pass

    def step(self, state, committed: list) -> StepOut:
        raise NotImplementedError

    def laws(self, logits: torch.Tensor) -> torch.Tensor:
        """The target's laws where the logits are (float32), not copied to the host."""
        c = self.ctx.cfg
        return target_laws(logits.float(), c.temperature, c.top_k, c.top_p)


class AR(Family):
    """Plain autoregressive sampling: one token per forward."""
    drafts = False

    def step(self, state, committed):
        c, n = self.ctx, len(committed)
        logits, _ = c.forward(state, torch.tensor([committed[-1]]), torch.tensor([n - 1]))
        q = self.laws(logits)
        c.model.commit(state, torch.arange(1))
        tok = c.rnd.draw(n, q[:1])[0]
        token, events = simple_record(n, simple_pack(q[0], tok, c.cfg if c.record else None).tolist(), "ar",
                                      c.cfg if c.record else None, c.rnd)          # the step's one read
        return StepOut([token], events)


class Jacobi(Family):
    """Jacobi window (SJD, docs/algorithms.md §3): the target drafts for itself; the chain is judged in one pass.
    With the `couple` knob (any Jacobi method) refined drafts are maximally coupled across iterations (MC-SJD)."""

    def __init__(self, ctx: Ctx, drafter_factory: DrafterFactory | None = None):
        super().__init__(ctx)
        c = ctx.cfg
        self.drafter: ChainDrafter = JacobiDrafter(c.window, ctx.model.codebook_size, ctx.model.grid, c.init, ctx.rnd,
                                                   couple=bool(c.couple))

    def step(self, state, committed):
        c, n = self.ctx, len(committed)
        x, p = self.drafter.propose(committed, n)
        feed = torch.cat([x.new_tensor([committed[-1]]), x])
        logits, _ = c.forward(state, feed, torch.arange(n - 1, n - 1 + len(feed)))
        q = self.laws(logits)                                                       # (k+1, V)
        x, p = x.to(q.device), p.to(q.device)                      # the first window's fresh drafts: host-made
        bonus_ok = n + len(x) < c.n_pos
        res = c.rnd.chain(q, p, x, c.accept_fn, n, bonus_ok, self.drafter.known(), c.method.lossless)
        c.model.commit(state, torch.arange(res.accepted + 1))
        self.drafter.update(res.accepted, q)
        pack = chain_pack(x, p, q, res, c.cfg if c.record else None)
        vals = torch.cat([pack, self.drafter.x.to(pack.device, torch.float64)]).tolist()     # the step's one read
        self.drafter.settle(vals[len(pack):])
        new, events = chain_record(n, vals[:len(pack)], len(x), res, c.cfg if c.record else None, c.rnd)
        out = StepOut(new, events)
        if c.record:
            out.drafted = [Drafted(i + 1, i, n + i, t) for i, t in enumerate(int(v) for v in vals[1:1 + len(x)])]
        return out


class TreeSteps(Family):
    """The tree step TreeFamily and SJD-PAC share: the drafter builds a DraftTree under the newest committed token,
    ONE target forward under its mask, the walk (CASCADE: with the method's groups), the path's KV rows kept, and
    `learn` tells the drafter what the step found. `features`: whether the drafter reads the target's hidden states."""
    drafter: TreeBuilder
    features = True
    walk_reads = 2                   # at most two reads in the walk (levelpack.Ahead): the step's only reads

    def step(self, state, committed):
        c, n = self.ctx, len(committed)
        tree = self.drafter.build(committed[-1], n - 1)
        pos = n - 1 + torch.tensor(tree.depths)
        logits, hidden = c.forward(state, torch.tensor(tree.tokens), pos, tree.mask())
        hidden = hidden.float() if self.features else None
        q = self.laws(logits)                       # (N, V) where the model put it: the walk reads once a level
        self.before_walk(tree, q, n)
        group_fn = c.method.groups(tree, hidden, c.cfg) if c.method.groups is not None else None
        walk = walk_tree(c, tree, q, group_fn, c.cfg.cascade_budget, n, self.walk_reads)
        c.model.commit(state, torch.tensor(walk.path))
        new = [tree.tokens[i] for i in walk.path[1:]] + ([walk.new_token] if walk.new_token >= 0 else [])
        self.learn(tree, walk, q, hidden, new, n)
        return tree_step_out(c, n, tree, q, walk, new)

    def before_walk(self, tree: DraftTree, q: torch.Tensor, n: int) -> None:
        """After the forward, before the walk (SJD-PAC: what the walk's reads carry for its drafter)."""

    def learn(self, tree: DraftTree, walk: TreeWalk, q: torch.Tensor, hidden: torch.Tensor | None, new: list,
              n: int) -> None:
        raise NotImplementedError


class TreeFamily(TreeSteps):
    """A draft tree (EAGLE head or draft model, docs/algorithms.md §4), verified level by level; CASCADE adds groups."""
    needs_drafter = True

    def __init__(self, ctx: Ctx, drafter_factory: DrafterFactory | None = None):
        super().__init__(ctx)
        self.drafter: TreeDrafter = drafter_factory(ctx.model, ctx.cfg, ctx.rnd)

    def start(self, committed, hidden0):
        self.drafter.observe([committed[0]], [0], host(hidden0)[None])

    def learn(self, tree, walk, q, hidden, new, n):
        self.drafter.observe(new, list(range(n, n + len(new))), hidden[walk.path][:len(new)])


class SJDPAC(TreeSteps):
    """SJD-PAC (drafters/pac.py): the tree step over a proactive tree plus a continuation chain, which carries what
    each forward learnt about the positions past the new token."""
    features = False
    walk_reads = 2                   # (1: every level in one read, the time of all the levels: see docs/benchmarks.md)

    def __init__(self, ctx: Ctx, drafter_factory: DrafterFactory | None = None):
        super().__init__(ctx)
        self.drafter: PACDrafter = PACDrafter(ctx.cfg, ctx.model.codebook_size, ctx.n_pos, ctx.rnd,
                                              getattr(ctx.model, "device", "cpu"))   # the toy models: CPU only

    def before_walk(self, tree, q, n):
        self.drafter.ride(tree, q, n)

    def learn(self, tree, walk, q, hidden, new, n):
        self.drafter.carry_on(tree, walk.path, q)


def walk_tree(c: Ctx, tree: DraftTree, q: torch.Tensor, group_fn, budget: float, n: int, reads: int = 2) -> TreeWalk:
    """The tree's verification under the run's randomness (root at position n - 1) in at most `reads` reads
    (without CASCADE's budget, levelpack.Ahead)."""
    def bonus_ok(d):
        return n - 1 + d + 1 < c.n_pos
    return c.rnd.tree(tree, q, c.accept_fn, n - 1, group_fn, budget, bonus_ok, c.cfg.h_norm, reads)


def tree_step_out(c: Ctx, n: int, tree: DraftTree, q: torch.Tensor, walk: TreeWalk, new: list) -> StepOut:
    """A tree step's result and, when recording, its events and Drafted records (walk: verify.TreeWalk)."""
    out = StepOut(new)
    if c.record:
        out.events = tree_events(n - 1, tree, q, walk, c.cfg, c.rnd)
        out.drafted = [Drafted(i, tree.parents[i], n - 1 + tree.depths[i], tree.tokens[i])
                       for i in range(1, len(tree.tokens))]
    return out
