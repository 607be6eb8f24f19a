"""Structural checks of a trace read from a file (anyone may upload one): every field has the type and range the
views rely on. What a method's record promises about its runs (the method is registered, its config is valid, it
makes only its decisions) is the engine's check (engine.validate), run on top of this one by the app."""
from __future__ import annotations

from dataclasses import astuple

from specviz.core.numbers import finite_number, whole_number
from specviz.core.records import DECISIONS, Drafted, Sibling, TokenEvent

MAX_TOKEN = 1 << 20             # codebook sizes: scenes 512, Janus-Pro 16384
MAX_SIDE = 64                   # grid side limit for traces read from files (Janus-Pro: 24)
MAX_EVENTS = 4096               # per verification step
_FLOATS = ("p_draft", "p_target", "accept_prob", "exact_prob", "u", "entropy", "entropy_norm", "tv", "tv_cost",
           "moved", "tv_residual")


def want(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(f"not a specviz trace: {message}")


def check_structure(trace) -> None:
    """ValueError naming the first field of `trace` (a core.trace.Trace) out of type or range."""
    want(isinstance(trace.method, str) and 0 < len(trace.method) <= 64, "method must be a short name")
    want(isinstance(trace.model, str) and 0 < len(trace.model) <= 200, "model must be a short name")
    want(len(trace.grid) == 2 and all(whole_number(v, 1, MAX_SIDE) for v in trace.grid),
         f"grid must be [rows, columns], each 1..{MAX_SIDE}")
    want(isinstance(trace.config, dict), "config must be an object")
    n_pos = trace.grid[0] * trace.grid[1]
    want(len(trace.tokens) <= n_pos and all(whole_number(t, 0, MAX_TOKEN) for t in trace.tokens), "bad tokens list")
    want(1 <= len(trace.steps) <= n_pos + 1, f"a {trace.grid} grid allows 1..{n_pos + 1} verification steps")
    for st in trace.steps:
        want(whole_number(st.step, 0, n_pos + 1) and finite_number(st.seconds) and st.seconds >= 0,
             "bad step header")
        want(isinstance(st.events, list) and len(st.events) <= MAX_EVENTS, "too many events in one step")
        want(isinstance(st.drafted, list) and len(st.drafted) <= MAX_EVENTS
             and all(isinstance(r, Drafted) and all(whole_number(v, -1, MAX_TOKEN) for v in astuple(r))
                     and 0 <= r.pos < n_pos for r in st.drafted), f"step {st.step}: bad drafted list")
        for ev in st.events:
            check_event(ev, n_pos, st.step)
    want(all(ev.decision == "ar" for ev in trace.steps[0].events), "the prefill step makes only ar decisions")
    committed = [(ev.pos, ev.token) for _, ev in trace.events() if ev.commits]
    want(len({p for p, _ in committed}) == len(committed), "a position is committed twice")
    want(sorted(committed) == list(enumerate(trace.tokens)), "the tokens list differs from the committed tokens")


def check_event(ev: TokenEvent, n_pos: int, step: int) -> None:
    where = f"step {step}: event"
    want(whole_number(ev.pos, 0, n_pos - 1), f"{where} position {ev.pos!r} is off the grid")
    want(whole_number(ev.token, 0, MAX_TOKEN) and whole_number(ev.level, 0, MAX_EVENTS)
         and whole_number(ev.node, -1, MAX_EVENTS) and whole_number(ev.parent, -1, MAX_EVENTS),
         f"{where} at {ev.pos}: token, level and node must be whole numbers in range")
    want(ev.decision in DECISIONS, f"{where} at {ev.pos}: decision {ev.decision!r} unknown")
    want(isinstance(ev.point_mass, bool), f"{where} at {ev.pos}: point_mass must be true or false")
    for name in _FLOATS:
        want(finite_number(getattr(ev, name)), f"{where} at {ev.pos}: {name} must be a finite number")
    want(ev.coupled_prob is None or (finite_number(ev.coupled_prob) and 0 <= ev.coupled_prob <= 1 + 1e-5),
         f"{where} at {ev.pos}: coupled_prob must be a probability")
    want(ev.target_sample is None or whole_number(ev.target_sample, 0, MAX_TOKEN),
         f"{where} at {ev.pos}: target_sample must be a token")
    if ev.groups is not None:
        _check_groups(ev.groups, f"{where} at {ev.pos}")


def _check_groups(g, where: str) -> None:
    for name in ("similarity", "budget_left", "scale"):
        want(finite_number(getattr(g, name)), f"{where}: {name} must be a finite number")
    want(all(isinstance(v, list) and len(v) <= MAX_EVENTS for v in (g.interchangeable, g.convergent, g.siblings)),
         f"{where}: group lists must be short lists")
    want(all(whole_number(v, -1, MAX_EVENTS) for v in g.interchangeable + g.convergent)
         and all(isinstance(r, Sibling) and whole_number(r.node, -1, MAX_EVENTS) and whole_number(r.token, 0, MAX_TOKEN)
                 and whole_number(r.level, -1, MAX_EVENTS) and whole_number(r.parent, -1, MAX_EVENTS)
                 and all(finite_number(v) for v in (r.q, r.cos, r.child_cos)) for r in g.siblings),
         f"{where}: malformed group lists")
