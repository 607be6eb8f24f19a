"""Shared toy setups for engine tests: a tiny random target with a random EAGLE head."""
import dataclasses
import itertools

import torch

from specviz.core.records import Groups
from specviz.core.sampling import target_probs
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode
from specviz.engine.drafters.protocols import DrafterFactory
from specviz.engine.drafters.tree import HeadDrafter
from specviz.engine.target import Prefilled
from specviz.models.scenes import tiny
from specviz.scenes.drafter import DraftHead

# A flat toy for the chi-square tests: 256 sequences, none above 4.5 %, 123 cells with expected count >= 5 at N = 3000
# (tests/engine/test_exactness.py checks this); the default toy (sharpen 3) puts 66 % on one sequence and has no power.
FLAT = dict(codes=4, grid=2, sharpen=0.4)


def toy(codes=3, grid=2, seed=0, sharpen=3.0):
    model = tiny(codes=codes, grid=grid, seed=seed, sharpen=sharpen)
    return model, head_factory(toy_head(model, grid, seed))


def toy_head(model, grid: int, seed: int = 0) -> DraftHead:
    """The toy's random EAGLE head."""
    torch.manual_seed(seed + 1)
    head = DraftHead(model.hidden_size, 2, grid * grid)
    for p in head.parameters():
        if p.dim() > 1:
            torch.nn.init.normal_(p, std=0.5)
    return head


def head_factory(head: DraftHead) -> DrafterFactory:
    return DrafterFactory(lambda m, cfg, gen: HeadDrafter(head, m, cfg, gen), "")    # unnamed: no drafter line


class OnePrefill:
    """A scenes model whose prefill runs once per (prompt, cfg scale): each call returns a fresh copy of that first
    result (the KV cache cloned, so a run's writes never reach the next). Prefill is deterministic, so every run's
    tokens and records are those of the model itself, bit for bit (tests/engine/test_exactness.py checks it); the
    chi-square tests' thousands of runs skip a forward each."""

    def __init__(self, m):
        self.m, self._done = m, {}

    def __getattr__(self, k):
        return getattr(self.m, k)

    def prefill(self, prompt, cfg_scale):
        key = (repr(prompt), float(cfg_scale))
        if key not in self._done:
            self._done[key] = self.m.prefill(prompt, cfg_scale)
        pf = self._done[key]
        with torch.inference_mode():
            state = dataclasses.replace(pf.state, kv=[(k.clone(), v.clone()) for k, v in pf.state.kv])
            return Prefilled(state, pf.logits.clone(), pf.hidden.clone())


def run(model, factory, **kw):
    kw.setdefault("prompt", "red house")
    *_, last = decode(model, RunConfig(**kw), factory)
    return last.trace


def exact_law(model, prompt="red house", cfg_scale=3.0, temperature=1.0):
    """The AR joint law of all image tokens by enumeration: {tuple(tokens): prob} (one prefill, copied per sequence)."""
    model = model if isinstance(model, OnePrefill) else OnePrefill(model)
    n = model.grid[0] * model.grid[1]
    out = {}
    for seq in itertools.product(range(model.codebook_size), repeat=n):
        pf = model.prefill(prompt, cfg_scale)
        logits, _ = model.forward(pf.state, torch.tensor(seq[:-1]), torch.arange(n - 1))
        model.commit(pf.state, torch.arange(0))
        q = target_probs(torch.cat([pf.logits[None], logits]), temperature)
        out[seq] = float(torch.prod(q[torch.arange(n), torch.tensor(seq)]))
    return out


class CountingModel:
    """Wraps a model boundary and counts target forwards (prefill included)."""

    def __init__(self, m):
        self.m, self.calls = m, 0

    def __getattr__(self, k):
        return getattr(self.m, k)

    def prefill(self, *a, **k):
        self.calls += 1
        return self.m.prefill(*a, **k)

    def forward(self, *a, **k):
        self.calls += 1
        return self.m.forward(*a, **k)


def check_decisions(events) -> None:
    """Each judged decision agrees with its recorded probabilities and uniform."""
    for e in events:
        if e.decision == "exact":
            assert e.u < e.exact_prob
        elif e.decision == "relaxed":
            assert e.exact_prob <= e.u < e.accept_prob
        elif e.decision == "rejected":
            assert e.u >= e.accept_prob


def grp(ev):
    """An event's `groups` extension, or the defaults every event without one reads as."""
    return ev.groups or Groups()
