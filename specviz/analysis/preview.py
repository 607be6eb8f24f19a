"""Instant preview: re-score the RECORDED drafts of a finished run under new λ, δ, τ_pos, τ_seq — no model call.

Every judged TokenEvent keeps what its rule needed (docs/design.md §4): q(x), p(x), the normalised entropy, TV(p, q)
and, for CASCADE, the Sibling records (node, token, q at the candidate's position, cos, child cos, level, parent).
From these the acceptance probability b' of each recorded draft under other knob values follows: in closed form for
chains; for CASCADE by re-running each level's walk (running residual, the level's TV, the step's budget) on the
recorded masses (cascade_level). What cannot be known without the model: drafts that were never judged (after the
first rejection of a chain), the groups of tree siblings after the accepted one, and the full law of a sampled
sibling. So the numbers are a preview of the recorded drafts, not a new run; releasing a slider runs the model for the
real thing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from specviz.core.trace import JUDGED, TokenEvent, Trace
from specviz.engine import rules, verify


class Knobs(dict):
    """Knob values for a re-scoring: the run's config with some knobs moved (attribute access: knobs.lam)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def budget(self) -> float:
        return self.get("cascade_budget", math.inf)

    @classmethod
    def from_config(cls, config: dict, **over) -> "Knobs":
        """Registry defaults, then the run's config, then the moved knobs (None = not moved)."""
        from specviz.engine.methods import all_knobs
        base = {k.name: k.default for k in all_knobs()} | dict(config)
        return cls(base | {k: v for k, v in over.items() if v is not None})


def exact_prob(ev: TokenEvent) -> float:
    """min(1, q(x)/p(x)); 1 where the draft law puts no mass on x (as rules.lossless)."""
    return min(1.0, ev.p_target / ev.p_draft) if ev.p_draft > 0 else 1.0


def csd_accept(ev: TokenEvent, lam: float, delta: float, g: str = "h") -> float:
    """CSD (docs/algorithms.md §7): b' = min(1, q(x)/p(x) + λ·g(H)) where TV(p, q) < δ, else min(1, q(x)/p(x));
    g(H) = H or 1 - H on the run's normalised entropy."""
    if ev.p_draft <= 0:
        return 1.0
    gh = max(0.0, 1.0 - ev.entropy_norm) if g == "one_minus_h" else ev.entropy_norm
    relax = lam * gh if ev.tv < delta else 0.0
    return min(1.0, ev.p_target / ev.p_draft + relax)


def cascade_group(ev: TokenEvent, tau_pos: float, tau_seq: float, sets: str = "paper") -> tuple[list[int], list[int]]:
    """Re-derived CASCADE groups of one candidate from its Sibling records (groups.py). paper: I(n) = records at n's
    level with cos >= τ_pos, C(n) = records one level up or down with cos >= τ_seq; siblings: I(n) = cos >= τ_pos,
    C(n) = largest child cosine >= τ_seq (child_cos is -1 where a branch has no children)."""
    if sets == "paper":
        return ([r.node for r in ev.siblings if r.level == ev.level and r.cos >= tau_pos],
                [r.node for r in ev.siblings if abs(r.level - ev.level) == 1 and r.cos >= tau_seq])
    return ([r.node for r in ev.siblings if r.cos >= tau_pos],
            [r.node for r in ev.siblings if r.child_cos > -1.0 and r.child_cos >= tau_seq])


def cascade_level(evs: list[TokenEvent], knobs: Knobs, left: float):
    """One level's CASCADE walk re-built from its judged events (in judge order) and their Sibling records, on a
    reduced vocabulary (every token whose q is recorded, plus one cell for the rest of q's mass), then fitted into
    `left` exactly as the engine does (verify.level_law, verify.fit_level). For point-mass siblings this is the
    engine's own computation: the same b and level TV whenever every sibling's group is known. What the trace cannot
    tell: the groups of siblings after the accepted one (taken as lossless here, so the level's TV, and with it the
    budget spent, can come out lower than a new run's) and the full law of a sampled sibling (its p(x) at x, the
    rest of its mass on the rest cell)."""
    d, par = evs[0].level, evs[0].parent
    q_of = {evs[0].token: evs[0].p_target}                       # the first sibling was judged against q itself
    for ev in evs:
        for r in ev.siblings:
            q_of.setdefault(r.token, r.q)                        # records: q at this level's position
    for ev in evs:
        q_of.setdefault(ev.token, ev.p_target)
    judged = {ev.node for ev in evs}
    later = sorted({(r.node, r.token) for ev in evs for r in ev.siblings
                    if par >= 0 and r.parent == par and r.level == d and r.node not in judged})
    toks = sorted(q_of)
    at = {t: i for i, t in enumerate(toks)}
    rest = len(toks)
    q = torch.tensor([q_of[t] for t in toks] + [max(0.0, 1.0 - sum(q_of.values()))])
    xs = [at[ev.token] for ev in evs] + [at[t] for _, t in later]
    laws = []
    for ev, x in zip(evs + [None] * len(later), xs):
        law = torch.zeros(rest + 1)
        law[x] = 1.0 if ev is None or ev.point_mass else ev.p_draft
        law[rest] += 1.0 - float(law.sum())
        laws.append(law)
    toks_by_node = {r.node: r.token for ev in evs for r in ev.siblings}
    members = [[at[toks_by_node[m]] for m in set().union(*cascade_group(ev, knobs.tau_pos, knobs.tau_seq,
                                                                          knobs.get("cascade_sets", "paper")))]
               for ev in evs] + [[] for _ in later]

    def build(s: float):
        lvl = verify.level_law(q, laws, xs, lambda j, r, p: rules.cascade(r, p, xs[j], members[j], s))
        lvl.scale = s
        return lvl
    return verify.fit_level(build, left)


@dataclass(frozen=True)
class Preview:
    """A finished run re-scored under new knobs."""
    method: str
    tunable: bool                       # whether the method's rule depends on the knobs at all
    accept: np.ndarray                  # (H, W) b' of the last judged draft per position (NaN: none judged)
    recorded: np.ndarray                # (H, W) the recorded b at the same events
    expected_len: list                  # per verification step >= 1: 1 + Σ_k Π_{j<=k} a_j
    baseline_len: list                  # the same from the recorded b
    expected_compression: float         # positions / expected forwards under the new knobs
    baseline_compression: float         # the same estimate from the recorded b (compare like with like)
    recorded_compression: float         # what the run actually achieved


def csd_rescore(judged: list[TokenEvent], knobs: Knobs) -> list[float]:
    return [csd_accept(ev, knobs.lam, knobs.delta, knobs.g) for ev in judged]


def cascade_rescore(judged: list[TokenEvent], knobs: Knobs) -> list[float]:
    """One step's candidates in judge order, level by level (cascade_level): each level gets what the earlier
    levels' TVs left of the step's budget."""
    used, out, start = 0.0, [], 0
    for i in range(1, len(judged) + 1):
        if i == len(judged) or judged[i].level != judged[start].level:
            lvl = cascade_level(judged[start:i], knobs, knobs.budget - used)
            used += lvl.cost
            out += lvl.b[:i - start]
            start = i
    return out


def tunable(method: str) -> bool:
    """Whether the method's rule depends on the previewed knobs at all (it has a re-scoring in the registry)."""
    from specviz.engine import methods
    return method in methods.REGISTRY and methods.get(method).rescore is not None


def step_scores(trace: Trace, knobs: Knobs) -> list[list[tuple[TokenEvent, float]]]:
    """Per step: (judged event, b') in judge order; methods without a re-scoring keep the recorded b."""
    from specviz.engine import methods
    rescore_fn = methods.get(trace.method).rescore if tunable(trace.method) else None
    out = []
    for st in trace.steps:
        judged = [ev for ev in st.events if ev.decision in JUDGED]
        bs = rescore_fn(judged, knobs) if rescore_fn else [ev.accept_prob for ev in judged]
        out.append(list(zip(judged, bs)))
    return out


def expected_length(scored: list[tuple[TokenEvent, float]]) -> float:
    """1 + Σ_k Π_{l<=k} a_l with a_l = 1 - Π_{siblings s at level l} (1 - b'_s) (a chain has one draft per level):
    the expected tokens one verification step commits, the resampled / bonus token included."""
    levels: dict[int, float] = {}
    for ev, b in scored:
        levels[ev.level] = levels.get(ev.level, 1.0) * (1.0 - b)
    total, run = 1.0, 1.0
    for lvl in sorted(levels):
        run *= 1.0 - levels[lvl]
        total += run
    return total


def rescore(trace: Trace, knobs: Knobs) -> Preview:
    """Re-score every recorded draft of `trace` under `knobs`."""
    h, w = trace.grid
    n = h * w
    accept, recorded = np.full(n, np.nan), np.full(n, np.nan)
    lens, base = [], []
    for i, row in enumerate(step_scores(trace, knobs)):
        for ev, b in row:
            accept[ev.pos], recorded[ev.pos] = b, ev.accept_prob
        if i > 0:
            lens.append(expected_length(row))
            base.append(expected_length([(ev, ev.accept_prob) for ev, _ in row]))
    return Preview(trace.method, tunable(trace.method), accept.reshape(h, w), recorded.reshape(h, w), lens, base,
                   _compression(n, lens), _compression(n, base), float(n / max(1, len(trace.steps))))


def _compression(n: int, lens: list) -> float:
    """positions / (1 prefill + (n - 1) / mean expected step length)."""
    if not lens:
        return 1.0
    return float(n / (1.0 + (n - 1) / float(np.mean(lens))))
