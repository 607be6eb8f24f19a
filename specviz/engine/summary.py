"""A run's summary (docs/methods.md §7): counts, costs and what the method's rule promised, from its trace."""
from __future__ import annotations

import numpy as np

from specviz.core.records import ACCEPTED, JUDGED
from specviz.core.trace import Trace
from specviz.engine import randomness, registry
from specviz.engine.registry import KnobValues


def summarize(trace: Trace, seconds: float, forward_seconds: float | None = None) -> dict:
    """Counts and costs of the run; sets and returns trace.summary. `seconds`: the run's wall time, prefill included;
    forward_seconds: of it, the time inside the target's prefill and forwards (engine/clock.py), and engine_seconds
    the rest (drafting, the rules, the record); both absent when not measured. tv_cost is Σ over positions of each
    position's per-token TV(o, q): not the TV of any law, but an upper bound on the TV between the image's joint
    law and AR's (the hybrid argument); tv_cost_mean divides it by the positions a rule judged; tv_bound is Σ of
    what the rule promises at those positions (None when the rule promises nothing)."""
    n_pos = trace.grid[0] * trace.grid[1]
    forwards = len(trace.steps)
    decisions = [ev.decision for _, ev in trace.events()]
    per_step = [sum(ev.commits for ev in st.events) for st in trace.steps]
    accepted = [sum(ev.decision in ACCEPTED for ev in st.events) for st in trace.steps[1:]]
    com = trace.committing()
    judged = judged_at_commit(trace.steps)
    total = sum(ev.tv_cost for _, ev in com.values())
    trace.summary = {
        "target_forwards": forwards, "tokens": len(com),
        "step_compression": round(n_pos / max(1, forwards), 4), "seconds": round(seconds, 4),
        "mean_accepted": round(float(np.mean(per_step[1:])) if len(per_step) > 1 else 1.0, 4),
        "accepted_drafts": int(sum(accepted)), "relaxed": decisions.count("relaxed"),
        "rejected": decisions.count("rejected"), "tv_cost": round(total, 4),
        "judged_positions": len(judged), "tv_cost_mean": round(total / max(1, len(judged)), 6),
        "tv_bound": promised(registry.get(trace.method), trace.config, judged),
        "accepted_hist": np.bincount(per_step[1:], minlength=1).tolist() if len(per_step) > 1 else [0],
    }
    if forward_seconds is not None:
        trace.summary |= {"forward_seconds": round(forward_seconds, 4),
                          "engine_seconds": round(max(0.0, seconds - forward_seconds), 4)}
    return trace.summary


def judged_at_commit(steps) -> dict:
    """pos -> the judged events (exact / relaxed / rejected) at that position in the step that committed it."""
    out = {}
    for st in steps:
        done = {ev.pos for ev in st.events if ev.commits and ev.decision != "bonus" and ev.decision != "ar"}
        for ev in st.events:
            if ev.pos in done and ev.decision in JUDGED:
                out.setdefault(ev.pos, []).append(ev)
    return out


def promised(method, config: dict, judged: dict) -> float | None:
    """Σ over judged positions of Σ over the drafts judged there of the rule's per-draft promise (lossless: 0)."""
    if method.lossless:
        return 0.0
    if method.bound is None or not randomness.of_config(config).promises:    # keyed: not the papers' draws (§9)
        return None
    knobs = KnobValues.from_config(config)
    per = [method.bound(ev, knobs) for evs in judged.values() for ev in evs]
    return None if any(b is None for b in per) else round(sum(per), 4)
