"""The one speculative loop: draft -> one target forward -> rule -> commit -> yield a step record.

`decode(model, cfg)` is a generator of `Progress` records; the CLI, the bench and the app all drain it. Every
method of design.md §3 runs through it: `ar` (no drafter), Jacobi methods (sjd, csd, gsd) and tree methods (sd,
cascade, lantern). Randomness is one explicit torch.Generator seeded from cfg.seed.
"""
from __future__ import annotations

import time
import weakref
from dataclasses import dataclass
from typing import Iterator

import torch

from specviz import rules
from specviz.config import JACOBI_METHODS, TREE_METHODS, ConfigError, RunConfig
from specviz.drafters.jacobi import JacobiDrafter
from specviz.events import chain_events, simple_event, tree_events
from specviz.sampling import entropy, sample, target_probs, tv
from specviz.trace import StepEvent, Trace
from specviz.verify import verify_chain, verify_tree


@dataclass
class Progress:
    """One verification step of a run (what the UI draws after each target forward)."""
    step: StepEvent
    tokens: list                 # committed tokens so far, raster order
    trace: Trace                 # the growing trace (summary filled when done)
    done: bool


def make_accept_fn(cfg: RunConfig, model):
    """The vectorised acceptance function of the run's rule: (q (L,V), p (L,V)) -> a (L,V)."""
    m = cfg.method
    if m in ("ar", "sjd", "sd", "cascade"):
        return rules.lossless
    if m == "csd":
        def csd(q, p):
            h = entropy(q, cfg.h_norm)
            g = (1 - h).clamp_min(0) if cfg.g == "one_minus_h" else h
            return rules.csd(q, p, cfg.lam * g, tv(p, q), cfg.delta)
        return csd
    if m == "lantern":
        nbrs = neighbour_table(model, cfg.lantern_k)
        return lambda q, p: rules.lantern(q, p, nbrs, cfg.lantern_k, cfg.lantern_delta)
    if m == "gsd":
        vecs = model.code_vectors().float().cpu()
        return lambda q, p: rules.gsd(q, p, vecs, cfg.gsd_group, cfg.gsd_gap, cfg.gsd_dist)
    raise ValueError(f"unknown method {m!r}")


_NBR_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # model -> {k: (V, k) table}
_NBR_CHUNK_FLOATS = 1 << 24            # distance rows per chunk x V <= 16M floats (64 MB), whatever the codebook size


def neighbour_table(model, k: int) -> torch.Tensor:
    """(V, k) nearest other codes by codebook distance (LANTERN), computed once per model, on the host.
    Distances are computed a block of rows at a time (never the full V x V matrix: 1 GB for 16384 codes)."""
    tables = _NBR_CACHE.setdefault(model, {})            # weak keys: a new model never sees a stale table
    if k not in tables:
        v = model.code_vectors().float()
        n = v.shape[0]
        rows = max(1, _NBR_CHUNK_FLOATS // n)
        out = []
        for i in range(0, n, rows):
            d = torch.cdist(v[i:i + rows], v)                                   # (rows, V)
            d[torch.arange(d.shape[0]), torch.arange(i, i + d.shape[0])] = float("inf")   # not its own neighbour
            out.append(d.topk(k, largest=False).indices.cpu())
        tables[k] = torch.cat(out)
    return tables[k]


def _host(t: torch.Tensor) -> torch.Tensor:
    """Model outputs -> float32 on the CPU, where the sampler's generator, the drafts and the rules live
    (a no-op for CPU models; a (N, V) copy per forward for a model on CUDA)."""
    return t.float().cpu()


def decode(model, cfg: RunConfig, drafter_factory=None, record: bool = True) -> Iterator[Progress]:
    """Run cfg.method on `model`. drafter_factory(model, cfg, gen) builds the tree drafter for tree methods.
    A tree method without a drafter fails here, before any model work."""
    if cfg.method in TREE_METHODS and drafter_factory is None:
        raise ConfigError(f"{cfg.method} needs a tree drafter: the scenes model ships one "
                          "(assets/drafter.safetensors); for other models pass --draft-model, or untick the tree "
                          "methods (sd, cascade, lantern)")
    return _decode(model, cfg, drafter_factory, record)


def _decode(model, cfg: RunConfig, drafter_factory, record: bool) -> Iterator[Progress]:
    gen = torch.Generator().manual_seed(cfg.seed)
    n_pos = model.grid[0] * model.grid[1]
    trace = Trace(cfg.method, model.name, list(model.grid), cfg.to_dict())
    t_start = t0 = time.perf_counter()
    pf = model.prefill(cfg.prompt, cfg.cfg)
    state = pf.state
    q0 = target_probs(_host(pf.logits), cfg.temperature, cfg.top_k, cfg.top_p)
    committed = [int(sample(q0, gen))]
    ev = [simple_event(0, committed[0], "ar", q0, cfg)] if record else []
    hidden_prev = _host(pf.hidden)                         # f before the newest committed token
    trace.steps.append(StepEvent(0, time.perf_counter() - t0, ev))
    yield Progress(trace.steps[-1], committed, trace, n_pos == 1)

    accept_fn = make_accept_fn(cfg, model)
    jacobi = JacobiDrafter(cfg.window, model.codebook_size, model.grid, cfg.init, gen) \
        if cfg.method in JACOBI_METHODS else None
    drafter = None
    if cfg.method in TREE_METHODS:
        drafter = drafter_factory(model, cfg, gen)
        drafter.observe([committed[0]], [0], hidden_prev[None])

    while len(committed) < n_pos:
        t0 = time.perf_counter()
        n = len(committed)
        root = committed[-1]
        if jacobi is not None:
            x, p = jacobi.propose(committed, n)
            feed = torch.cat([torch.tensor([root]), x])
            logits, hidden = model.forward(state, feed, torch.arange(n - 1, n - 1 + len(feed)))
            logits, hidden = _host(logits), _host(hidden)
            q = target_probs(logits, cfg.temperature, cfg.top_k, cfg.top_p)        # (k+1, V)
            res = verify_chain(q, p, x, accept_fn, gen, bonus_ok=n + len(x) < n_pos)
            model.commit(state, torch.arange(res.accepted + 1))
            new = x[:res.accepted].tolist() + ([res.new_token] if res.new_token >= 0 else [])
            ev = chain_events(n, x, p, q, res, new, cfg) if record else []
            drafted = [[i + 1, i, n + i, int(t)] for i, t in enumerate(x.tolist())] if record else []
            jacobi.update(res.accepted, q)
        elif drafter is not None:
            tree = drafter.build(root, n - 1)
            feed = torch.tensor(tree.tokens)
            pos = n - 1 + torch.tensor(tree.depths)
            logits, hidden = model.forward(state, feed, pos, tree.mask())
            logits, hidden = _host(logits), _host(hidden)
            q = target_probs(logits, cfg.temperature, cfg.top_k, cfg.top_p)        # (N, V)
            group_fn = cascade_groups(tree, hidden, cfg) if cfg.method == "cascade" else None
            path, new_tok, bonus, judged = verify_tree(tree, q, accept_fn, gen, group_fn,
                                                       cfg.cascade_budget, lambda d: n - 1 + d + 1 < n_pos)
            model.commit(state, torch.tensor(path))
            new = [tree.tokens[i] for i in path[1:]] + ([new_tok] if new_tok >= 0 else [])
            drafter.observe(new, list(range(n, n + len(new))), hidden[path][:len(new)])
            ev = tree_events(n - 1, tree, q, judged, path, new_tok, bonus, cfg) if record else []
            drafted = [[i, tree.parents[i], n - 1 + tree.depths[i], tree.tokens[i]]
                       for i in range(1, len(tree.tokens))] if record else []
        else:                                                                      # plain AR
            logits, hidden = model.forward(state, torch.tensor([root]), torch.tensor([n - 1]))
            logits = _host(logits)
            q = target_probs(logits, cfg.temperature, cfg.top_k, cfg.top_p)
            model.commit(state, torch.arange(1))
            new = [int(sample(q[0], gen))]
            ev = [simple_event(n, new[0], "ar", q[0], cfg)] if record else []
            drafted = []
        committed += new
        trace.steps.append(StepEvent(len(trace.steps), time.perf_counter() - t0, ev, drafted))
        done = len(committed) >= n_pos
        if done:
            trace.tokens = committed[:n_pos]
            trace.compute_summary(time.perf_counter() - t_start)
        yield Progress(trace.steps[-1], committed, trace, done)


def drain(progress: Iterator[Progress]) -> Progress:
    """Run a decode generator to the end; return its last record (the finished trace is .trace)."""
    last = None
    for last in progress:  # noqa: B007
        pass
    return last


def cascade_groups(tree, hidden: torch.Tensor, cfg: RunConfig):
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
