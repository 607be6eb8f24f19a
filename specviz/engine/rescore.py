"""Re-scoring of RECORDED drafts under other knob values (no model call): the closed forms and walks behind the
instant preview (analysis/preview.py) and the `rescore` hooks of the method records (methods.py).

Every judged TokenEvent keeps what its rule needed (docs/design.md §4): q(x), p(x), the normalised entropy, TV(p, q)
and, for CASCADE, the Sibling records of its `groups` extension. From these the acceptance probability b' of each
recorded draft follows: in closed form for chains; for CASCADE by re-running each level's walk (running residual,
the level's TV, the step's budget) on the recorded masses (cascade_level).
"""
from __future__ import annotations

import torch

from specviz.core import sampling
from specviz.core.records import TokenEvent
from specviz.engine import rules, verify
from specviz.engine.groups import cascade_sets
from specviz.engine.registry import KnobValues


def exact_prob(ev: TokenEvent) -> float:
    """min(1, q(x)/p(x)) (sampling.exact_at, in double precision); 0 where the draft law puts no mass on x."""
    return float(sampling.exact_at(torch.tensor(ev.p_draft, dtype=torch.float64),
                                torch.tensor(ev.p_target, dtype=torch.float64)))


def csd_accept(ev: TokenEvent, lam: float, delta: float, g: str = "h") -> float:
    """CSD (docs/algorithms.md §7): b' = min(1, q(x)/p(x) + λ·g(H)) where TV(p, q) < δ, else min(1, q(x)/p(x));
    g(H) = H or 1 - H on the run's normalised entropy."""
    if ev.p_draft <= 0:
        return 1.0
    relax = lam * rules.csd_g(ev.entropy_norm, g) if ev.tv < delta else 0.0
    return min(1.0, ev.p_target / ev.p_draft + relax)


def cascade_group(ev: TokenEvent, tau_pos: float, tau_seq: float, sets: str = "paper") -> tuple[list[int], list[int]]:
    """Re-derived CASCADE groups of one candidate from its Sibling records (the `groups` extension), by the same
    definition of the sets as the engine's (groups.cascade_sets)."""
    sibs = ev.groups.siblings if ev.groups is not None else []
    return cascade_sets(sets, ev.level, [(r.node, r.level, r.cos, r.child_cos) for r in sibs], tau_pos, tau_seq)


def _sibs(ev: TokenEvent) -> list:
    return ev.groups.siblings if ev.groups is not None else []


def cascade_level(evs: list[TokenEvent], knobs: KnobValues, left: float):
    """One level's CASCADE walk re-built from its judged events (in judge order) and their Sibling records, on a
    reduced vocabulary (every token whose q is recorded, plus one cell for the rest of q's mass), then fitted into
    `left` by the engine's own builder (verify.cascade_fit). For point-mass siblings this is the
    engine's own computation: the same b and level TV whenever every sibling's group is known. What the trace cannot
    tell: the groups of siblings after the accepted one (taken as lossless here, so the level's TV, and with it the
    budget spent, can come out lower than a new run's) and the full law of a sampled sibling (its p(x) at x, the
    rest of its mass on the rest cell)."""
    d, par = evs[0].level, evs[0].parent
    q_of = {evs[0].token: evs[0].p_target}                       # the first sibling was judged against q itself
    for ev in evs:
        for r in _sibs(ev):
            q_of.setdefault(r.token, r.q)                        # records: q at this level's position
    for ev in evs:
        q_of.setdefault(ev.token, ev.p_target)
    judged = {ev.node for ev in evs}
    later = sorted({(r.node, r.token) for ev in evs for r in _sibs(ev)
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
    toks_by_node = {r.node: r.token for ev in evs for r in _sibs(ev)}
    members = [[at[toks_by_node[m]] for m in set().union(*cascade_group(ev, knobs.tau_pos, knobs.tau_seq,
                                                                          knobs.get("cascade_sets", "paper")))]
               for ev in evs] + [[] for _ in later]

    return verify.cascade_fit(q, laws, xs, members, left)


def csd_rescore(judged: list[TokenEvent], knobs: KnobValues) -> list[float]:
    return [csd_accept(ev, knobs.lam, knobs.delta, knobs.g) for ev in judged]


def cascade_rescore(judged: list[TokenEvent], knobs: KnobValues) -> list[float]:
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
