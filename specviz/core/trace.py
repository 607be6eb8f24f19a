"""Typed trace records (docs/design.md §4): what happened at every judged token of every verification step.

Plain Python scalars only, so a trace round-trips through JSON exactly. `to_grid(field)` maps any per-position
field of the committing event onto the (H, W) token grid; the renderer and the app read only this.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, astuple, dataclass, field, fields
from pathlib import Path

import numpy as np

DECISIONS = ("exact", "relaxed", "rejected", "resampled", "bonus", "ar")
COMMITTING = frozenset({"exact", "relaxed", "resampled", "bonus", "ar"})
JUDGED = frozenset({"exact", "relaxed", "rejected"})    # decisions on a draft the rule judged
VERSION = 2                     # JSON contract: 1 = positional sibling / drafted lists; 2 = named records
MAX_TOKEN = 1 << 20             # codebook sizes: scenes 512, Janus-Pro 16384
MAX_SIDE = 64                   # grid side limit for traces read from files (Janus-Pro: 24)
MAX_EVENTS = 4096               # per verification step
MAX_BYTES = 16 << 20            # trace files larger than this are refused unread (ours: < 1 MB)
IMPLAUSIBLE_Q = 1e-3            # a committed code with target q below this is "implausible": AR draws it at most
                                # once in a thousand tries; relaxation lets such codes through as stray blobs


@dataclass(frozen=True)
class Sibling:
    """CASCADE: one other candidate m considered for a node n's group (enough to re-score τ_pos / τ_seq)."""
    node: int
    token: int
    q: float                     # target probability of m's token at n's position
    cos: float                   # cos(h_m, h_n) of the target hidden states
    child_cos: float             # largest cosine between a child of m and a child of n (-1: a branch has none)
    level: int = -1              # m's tree level (-1: unknown, traces before the paper reading)
    parent: int = -1             # m's parent node (-1: unknown)


@dataclass(frozen=True)
class Drafted:
    """One proposed token of a verification step: a window slot or a tree node."""
    node: int
    parent: int                  # -1 for a chain's first slot's parent (the root)
    pos: int
    token: int


@dataclass(frozen=True)
class TokenEvent:
    pos: int                     # raster position in the image grid
    token: int
    decision: str                # one of DECISIONS
    level: int = 0               # draft depth within the step (window slot or tree level), 0 for ar
    node: int = -1               # node id within the step's draft (tree) or slot index (window)
    p_draft: float = 0.0         # p(x) under the law the draft came from (1.0 for point masses)
    p_target: float = 0.0        # q(x)
    accept_prob: float = 1.0     # b = a(x)
    exact_prob: float = 1.0      # min(1, q(x)/p(x))
    u: float = -1.0              # the uniform the decision used (-1 when none)
    entropy: float = 0.0         # H(q) in nats
    entropy_norm: float = 0.0    # H(q) normalised as the run's h_norm says
    tv: float = 0.0              # TV(p, q) at this slot, against the target law q
    tv_cost: float = 0.0         # TV(o, q) of this position's output law (trees: the level's whole walk; 0 lossless)
    point_mass: bool = True      # the draft law was a point mass
    moved: float = 0.0           # tree rules: target mass granted to x beyond q(x) (CASCADE: against the budget)
    similarity: float = 0.0      # CASCADE: largest cosine to a group member
    interchangeable: list = field(default_factory=list)   # CASCADE: node ids of I(n)
    convergent: list = field(default_factory=list)        # CASCADE: node ids of C(n)
    siblings: list = field(default_factory=list)          # CASCADE re-scoring: list[Sibling]
    tv_residual: float = 0.0     # TV(p, r) against the law r the draft was judged against (tree siblings after the
    #                              first: the running residual; chains: equals tv)
    budget_left: float = 0.0     # CASCADE: TV budget the level could use, before deciding
    scale: float = 1.0           # CASCADE: factor on the level's relaxation mass that made its TV fit the budget
    parent: int = -1             # tree: the node's parent (-1 for chains and sampled tokens)

    @property
    def commits(self) -> bool:
        return self.decision in COMMITTING


@dataclass(frozen=True)
class StepEvent:
    step: int                    # target forward index (0 = prefill)
    seconds: float
    events: list                 # list[TokenEvent]
    drafted: list = field(default_factory=list)   # list[Drafted]: what was fed / proposed


@dataclass
class Trace:
    method: str
    model: str
    grid: list                   # [H, W]
    config: dict
    tokens: list = field(default_factory=list)
    steps: list = field(default_factory=list)     # list[StepEvent]
    summary: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ views
    def events(self, upto_step: int | None = None):
        """(step number, TokenEvent) for every event of every step, in order (up to and including `upto_step`)."""
        for st in self.steps[: None if upto_step is None else upto_step + 1]:
            for ev in st.events:
                yield st.step, ev

    def committing(self) -> dict[int, tuple[int, TokenEvent]]:
        """pos -> (step, committing event)."""
        return {ev.pos: (step, ev) for step, ev in self.events() if ev.commits}

    def implausible(self, below: float | None = None) -> int:
        """How many committed tokens the target gave probability below `below` (default IMPLAUSIBLE_Q)."""
        return count_below([ev.p_target for _, ev in self.committing().values()],
                           IMPLAUSIBLE_Q if below is None else below)

    def to_grid(self, name: str) -> np.ndarray:
        """(H, W) float array of a per-position field: finalize (step), attempts, decision (index into
        DECISIONS), or any numeric TokenEvent field of the committing event. NaN where undecided."""
        h, w = self.grid
        out = np.full(h * w, np.nan)
        if name == "attempts":
            for _, ev in self.events():
                if ev.decision != "resampled" and ev.decision != "bonus":
                    out[ev.pos] = (0 if np.isnan(out[ev.pos]) else out[ev.pos]) + 1
            for pos, _ in self.committing().items():
                out[pos] = 1 if np.isnan(out[pos]) else out[pos]
            return out.reshape(h, w)
        for pos, (step, ev) in self.committing().items():
            if name == "finalize":
                out[pos] = step
            elif name == "decision":
                out[pos] = DECISIONS.index(ev.decision)
            else:
                out[pos] = float(getattr(ev, name))
        return out.reshape(h, w)

    def compute_summary(self, seconds: float) -> dict:
        """Counts and costs of the run (docs/methods.md §7). tv_cost is Σ over positions of each position's per-token
        TV(o, q): not the TV of any law, but an upper bound on the TV between the image's joint law and AR's (the
        hybrid argument); tv_cost_mean divides it by the positions a rule judged; tv_bound is Σ of what the rule
        promises at those positions (None when the rule promises nothing)."""
        from specviz.engine import methods
        n_pos = self.grid[0] * self.grid[1]
        forwards = len(self.steps)
        decisions = [ev.decision for _, ev in self.events()]
        per_step = [sum(ev.commits for ev in st.events) for st in self.steps]
        accepted = [sum(ev.decision in ("exact", "relaxed") for ev in st.events) for st in self.steps[1:]]
        com = self.committing()
        judged = _judged_at_commit(self.steps)
        total = sum(ev.tv_cost for _, ev in com.values())
        self.summary = {
            "target_forwards": forwards, "tokens": len(com),
            "step_compression": round(n_pos / max(1, forwards), 4), "seconds": round(seconds, 4),
            "mean_accepted": round(float(np.mean(per_step[1:])) if len(per_step) > 1 else 1.0, 4),
            "accepted_drafts": int(sum(accepted)), "relaxed": decisions.count("relaxed"),
            "rejected": decisions.count("rejected"), "tv_cost": round(total, 4),
            "judged_positions": len(judged), "tv_cost_mean": round(total / max(1, len(judged)), 6),
            "tv_bound": _bound(methods.get(self.method), self.config, judged),
            "accepted_hist": np.bincount(per_step[1:], minlength=1).tolist() if len(per_step) > 1 else [0],
        }
        return self.summary

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict:
        return {"version": VERSION, "method": self.method, "model": self.model, "grid": list(self.grid),
                "config": self.config,
                "tokens": list(self.tokens), "summary": self.summary,
                "steps": [{"step": s.step, "seconds": s.seconds, "drafted": [asdict(r) for r in s.drafted],
                           "events": [asdict(e) for e in s.events]} for s in self.steps]}

    @classmethod
    def from_json(cls, d: dict) -> "Trace":
        """Parse and fully check a trace (files may come from anyone): ValueError naming the first problem.
        Reads contract versions 1 (positional sibling / drafted lists) and 2 (named records)."""
        names = {f.name for f in fields(TokenEvent)}

        def event(e: dict) -> TokenEvent:
            kw = {k: v for k, v in e.items() if k in names}
            kw["siblings"] = [_record(Sibling, r) for r in kw.get("siblings", [])]
            kw.setdefault("tv_residual", kw.get("tv", 0.0))              # traces before the field: chains' value
            return TokenEvent(**kw)
        try:
            _want(d.get("version", 1) in (1, VERSION),
                  f"unknown version {d.get('version')!r} (this reads 1..{VERSION})")
            steps = [StepEvent(s["step"], s["seconds"], [event(e) for e in s["events"]],
                               [_record(Drafted, r) for r in s.get("drafted", [])])
                     for s in d["steps"]]
            trace = cls(d["method"], d["model"], list(d["grid"]), _legacy(dict(d["config"])), list(d["tokens"]),
                        steps, dict(d.get("summary", {})))
        except KeyError as e:
            raise ValueError(f"not a specviz trace: the field {e} is missing") from None
        except (TypeError, ValueError, AttributeError) as e:
            raise ValueError(f"not a specviz trace: unexpected structure ({e})") from None
        trace.check()
        return trace

    def check(self) -> None:
        """Every field has the type and range the views rely on (cheap; run on anything read from a file)."""
        from specviz.engine import methods
        from specviz.engine.config import RunConfig
        _want(self.method in methods.REGISTRY,
              f"method {self.method!r} is not one of {', '.join(methods.REGISTRY)}")
        _want(isinstance(self.model, str) and 0 < len(self.model) <= 200, "model must be a short name")
        _want(len(self.grid) == 2 and all(_int(v, 1, MAX_SIDE) for v in self.grid),
              f"grid must be [rows, columns], each 1..{MAX_SIDE}")
        n_pos = self.grid[0] * self.grid[1]
        try:
            cfg = RunConfig.from_dict(self.config)
        except (TypeError, ValueError) as e:
            raise ValueError(f"not a specviz trace: config: {e}") from None
        _want(cfg.method == self.method, "config method differs from the trace method")
        _want(len(self.tokens) <= n_pos and all(_int(t, 0, MAX_TOKEN) for t in self.tokens), "bad tokens list")
        _want(1 <= len(self.steps) <= n_pos + 1, f"a {self.grid} grid allows 1..{n_pos + 1} verification steps")
        for st in self.steps:
            _want(_int(st.step, 0, n_pos + 1) and _num(st.seconds) and st.seconds >= 0, "bad step header")
            _want(isinstance(st.events, list) and len(st.events) <= MAX_EVENTS, "too many events in one step")
            _want(isinstance(st.drafted, list) and len(st.drafted) <= MAX_EVENTS
                  and all(isinstance(r, Drafted) and all(_int(v, -1, MAX_TOKEN) for v in astuple(r))
                          and 0 <= r.pos < n_pos for r in st.drafted), f"step {st.step}: bad drafted list")
            for ev in st.events:
                _check_event(ev, n_pos, st.step)
            allowed = {"ar"} if st is self.steps[0] else methods.get(self.method).decisions
            _want(all(ev.decision in allowed for ev in st.events),
                  f"step {st.step}: a {self.method} run makes only {', '.join(sorted(allowed))} decisions here")
        committed = [(ev.pos, ev.token) for _, ev in self.events() if ev.commits]
        _want(len({p for p, _ in committed}) == len(committed), "a position is committed twice")
        _want(sorted(committed) == list(enumerate(self.tokens)),
              "the tokens list differs from the committed tokens")

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json()))

    @classmethod
    def load(cls, path: str | Path, max_bytes: int = MAX_BYTES) -> "Trace":
        path = Path(path)
        size = path.stat().st_size
        if size > max_bytes:
            raise ValueError(f"{path.name} is {size >> 20} MB; trace files are limited to {max_bytes >> 20} MB")
        try:
            return cls.from_json(json.loads(path.read_bytes()))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"not a specviz trace (bad JSON: {e})") from None
        except RecursionError:
            raise ValueError("not a specviz trace (JSON nested too deeply)") from None


def _judged_at_commit(steps) -> dict:
    """pos -> the judged events (exact / relaxed / rejected) at that position in the step that committed it."""
    out = {}
    for st in steps:
        done = {ev.pos for ev in st.events if ev.commits and ev.decision != "bonus" and ev.decision != "ar"}
        for ev in st.events:
            if ev.pos in done and ev.decision in ("exact", "relaxed", "rejected"):
                out.setdefault(ev.pos, []).append(ev)
    return out


def _bound(method, config: dict, judged: dict) -> float | None:
    """Σ over judged positions of Σ over the drafts judged there of the rule's per-draft promise (lossless: 0)."""
    if method.lossless:
        return 0.0
    if method.bound is None:
        return None
    from specviz.engine.config import RunConfig
    cfg = RunConfig.from_dict(config)
    per = [method.bound(ev, cfg) for evs in judged.values() for ev in evs]
    return None if any(b is None for b in per) else round(sum(per), 4)


_FLOATS = ("p_draft", "p_target", "accept_prob", "exact_prob", "u", "entropy", "entropy_norm", "tv", "tv_cost",
           "moved", "similarity", "tv_residual", "budget_left", "scale")


def _check_event(ev: TokenEvent, n_pos: int, step: int) -> None:
    where = f"step {step}: event"
    _want(_int(ev.pos, 0, n_pos - 1), f"{where} position {ev.pos!r} is off the grid")
    _want(_int(ev.token, 0, MAX_TOKEN) and _int(ev.level, 0, MAX_EVENTS) and _int(ev.node, -1, MAX_EVENTS)
          and _int(ev.parent, -1, MAX_EVENTS),
          f"{where} at {ev.pos}: token, level and node must be whole numbers in range")
    _want(ev.decision in DECISIONS, f"{where} at {ev.pos}: decision {ev.decision!r} unknown")
    _want(isinstance(ev.point_mass, bool), f"{where} at {ev.pos}: point_mass must be true or false")
    for name in _FLOATS:
        _want(_num(getattr(ev, name)), f"{where} at {ev.pos}: {name} must be a finite number")
    _want(all(isinstance(v, list) and len(v) <= MAX_EVENTS for v in (ev.interchangeable, ev.convergent,
                                                                        ev.siblings)),
          f"{where} at {ev.pos}: group lists must be short lists")
    _want(all(_int(v, -1, MAX_EVENTS) for v in ev.interchangeable + ev.convergent)
          and all(isinstance(r, Sibling) and _int(r.node, -1, MAX_EVENTS) and _int(r.token, 0, MAX_TOKEN)
                  and _int(r.level, -1, MAX_EVENTS) and _int(r.parent, -1, MAX_EVENTS)
                  and all(_num(v) for v in (r.q, r.cos, r.child_cos)) for r in ev.siblings),
          f"{where} at {ev.pos}: malformed group lists")


def _legacy(config: dict) -> dict:
    """Configs of older traces: `cascade_scope` (parent | level) ran the siblings reading of CASCADE's sets."""
    if "cascade_scope" in config and "cascade_sets" not in config:
        config["cascade_sets"] = "siblings"
    return config


def _record(cls, r):
    """A named record from its JSON form: a dict (version 2) or a positional list (version 1)."""
    if isinstance(r, dict):
        return cls(**r)
    if isinstance(r, list):
        return cls(*r)
    raise TypeError(f"{cls.__name__} must be an object or a list, got {type(r).__name__}")


def _want(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(f"not a specviz trace: {message}")


def _int(v, lo: int, hi: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def count_below(q_committed, below: float) -> int:
    """The number of target probabilities strictly below `below` (the implausible-code count)."""
    return int(np.sum(np.asarray(q_committed, dtype=float) < below))
