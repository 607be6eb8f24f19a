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

from dataclasses import dataclass

import numpy as np

from specviz.core.records import JUDGED, TokenEvent
from specviz.core.trace import Trace
from specviz.engine import registry
from specviz.engine.registry import KnobValues


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


def tunable(method: str) -> bool:
    """Whether the method's rule depends on the previewed knobs at all (it has a re-scoring in the registry)."""
    return method in registry.REGISTRY and registry.get(method).rescore is not None


def step_scores(trace: Trace, knobs: KnobValues) -> list[list[tuple[TokenEvent, float]]]:
    """Per step: (judged event, b') in judge order; methods without a re-scoring keep the recorded b."""
    rescore_fn = registry.get(trace.method).rescore if tunable(trace.method) else None
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


def rescore(trace: Trace, knobs: KnobValues) -> Preview:
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
                   _compression(n, lens), _compression(n, base), achieved(trace))


def achieved(trace: Trace) -> float:
    """What a run achieved: positions per target forward (the summary's step compression, unrounded)."""
    return float(trace.grid[0] * trace.grid[1] / max(1, len(trace.steps)))


def _compression(n: int, lens: list) -> float:
    """positions / (1 prefill + (n - 1) / mean expected step length)."""
    if not lens:
        return 1.0
    return float(n / (1.0 + (n - 1) / float(np.mean(lens))))


@dataclass(frozen=True)
class Outcome:
    """A slider re-run beside what the preview predicted for it (predicted vs achieved)."""
    method: str
    before: float                       # the previous run's step compression (positions / target forwards)
    predicted: float                    # the preview's E[step compression]: the previous drafts at the new knobs
    achieved: float                     # the re-run's step compression


def outcomes(before: dict, after: dict, moved: tuple) -> list[Outcome]:
    """For each method of both runs: the estimate the preview showed for the re-run's values of the `moved` knobs
    (the previous run's drafts re-scored, as `rescore`; for a method the knobs do not tune, its previous run) against
    what the re-run achieved. Empty when the two runs
    differ in prompt, seed or model (then the preview was about another run)."""
    out = []
    for m, new in after.items():
        old = before.get(m)
        if old is None or any(old.config.get(k) != new.config.get(k) for k in ("prompt", "seed", "model")):
            continue
        knobs = KnobValues.from_config(old.config, **{k: new.config.get(k) for k in moved})
        pv = rescore(old, knobs)
        # a method whose rule the moved knobs do not touch: nothing to predict, its run stays what it was (the
        # estimate from its recorded b differs from the recorded run: an estimator's bias, not a knob's effect)
        predicted = pv.expected_compression if tunable(m) else pv.recorded_compression
        out.append(Outcome(m, pv.recorded_compression, predicted, achieved(new)))
    return out
