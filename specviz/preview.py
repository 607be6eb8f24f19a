"""Instant preview: re-score the RECORDED drafts of a finished run under new λ, δ, τ_pos, τ_seq — no model call.

Every judged TokenEvent keeps what its rule needed (design.md §4): q(x), p(x), the normalised entropy, TV(p, q) and,
for CASCADE, the sibling rows [node, token, q(token), cos, child_cos]. From these the acceptance probability b' of
each recorded draft under other knob values follows in closed form. What cannot be known without the model: drafts
that were never judged (after the first rejection of a chain), and the residual laws of later siblings (their
sibling q's are the parent's law, not the running residual). So the numbers are a preview of the recorded drafts,
not a new run; releasing a slider runs the model for the real thing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from specviz.trace import JUDGED, TokenEvent, Trace


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
        from specviz.methods import all_knobs
        base = {k.name: k.default for k in all_knobs()} | dict(config)
        return cls(base | {k: v for k, v in over.items() if v is not None})


def exact_prob(ev: TokenEvent) -> float:
    """min(1, q(x)/p(x)); 1 where the draft law puts no mass on x (as rules.lossless)."""
    return min(1.0, ev.p_target / ev.p_draft) if ev.p_draft > 0 else 1.0


def csd_accept(ev: TokenEvent, lam: float, delta: float, g: str = "h") -> float:
    """CSD (algorithms.md §7): b' = min(1, q(x)/p(x) + λ·g(H)) where TV(p, q) < δ, else min(1, q(x)/p(x));
    g(H) = H or 1 - H on the run's normalised entropy."""
    if ev.p_draft <= 0:
        return 1.0
    gh = max(0.0, 1.0 - ev.entropy_norm) if g == "one_minus_h" else ev.entropy_norm
    relax = lam * gh if ev.tv < delta else 0.0
    return min(1.0, ev.p_target / ev.p_draft + relax)


def cascade_group(ev: TokenEvent, tau_pos: float, tau_seq: float) -> tuple[list[int], list[int]]:
    """Re-derived CASCADE groups of one candidate: I(n) = {m : cos(h_m, h_n) >= τ_pos},
    C(n) = {m : max child cosine >= τ_seq} (child_cos is -1 where a branch has no children)."""
    inter = [r.node for r in ev.siblings if r.cos >= tau_pos]
    conv = [r.node for r in ev.siblings if r.child_cos > -1.0 and r.child_cos >= tau_seq]
    return inter, conv


def cascade_accept(ev: TokenEvent, tau_pos: float, tau_seq: float, budget_left: float = math.inf
                   ) -> tuple[float, float]:
    """CASCADE (design.md §3): b' = min(1, (q(x) + Σ_{m ∈ I ∪ C} q(x_m)) / p(x)), the moved mass capped by the
    step's remaining budget. Returns (b', moved mass)."""
    inter, conv = cascade_group(ev, tau_pos, tau_seq)
    members = set(inter) | set(conv)
    q_of = {r.token: r.q for r in ev.siblings if r.node in members and r.token != ev.token}
    extra = min(sum(q_of.values()), max(0.0, budget_left))
    if extra <= 0 or ev.p_draft <= 0:
        return exact_prob(ev), 0.0
    return min(1.0, (ev.p_target + extra) / ev.p_draft), extra


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
    """One step's candidates in judge order; the budget is spent along the recorded path."""
    used, out = 0.0, []
    for ev in judged:
        b, extra = cascade_accept(ev, knobs.tau_pos, knobs.tau_seq, knobs.budget - used)
        if ev.decision != "rejected" and ev.u >= exact_prob(ev):      # recorded path, relaxation needed
            used += extra
        out.append(b)
    return out


def tunable(method: str) -> bool:
    """Whether the method's rule depends on the previewed knobs at all (it has a re-scoring in the registry)."""
    from specviz import methods
    return method in methods.REGISTRY and methods.get(method).rescore is not None


def step_scores(trace: Trace, knobs: Knobs) -> list[list[tuple[TokenEvent, float]]]:
    """Per step: (judged event, b') in judge order; methods without a re-scoring keep the recorded b."""
    from specviz import methods
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
