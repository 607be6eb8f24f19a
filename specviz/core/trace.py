"""The Trace (docs/design.md §4) and its JSON contract: every verification step of one run, as records.py's events.

`to_grid(field)` maps any per-position field of the committing event onto the (H, W) token grid (the maps'
records in analysis/views.py's MAPS read fields through it by name; the maps themselves are listed there only).
Reading a file checks its structure (checks.py) and imports neither torch nor the engine; what a method's record
says about its trace (its name, config and decisions) is checked by engine.validate.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from specviz.core import checks
from specviz.core.records import (
    DECISIONS,
    GROUP_FIELDS,
    Drafted,
    Groups,
    Sibling,
    StepEvent,
    TokenEvent,
)

VERSION = 2                     # JSON contract: 1 = positional sibling / drafted lists; 2 = named records
MAX_BYTES = 16 << 20            # trace files larger than this are refused unread (ours: < 1 MB)
IMPLAUSIBLE_Q = 1e-3            # a committed code with target q below this is "implausible": AR draws it at most
                                # once in a thousand tries; relaxation lets such codes through as stray blobs
# an event's keys on disk, in contract version 2's order (the `groups` extension is stored flat, defaults elsewhere)
EVENT_KEYS = ("pos", "token", "decision", "level", "node", "p_draft", "p_target", "accept_prob", "exact_prob", "u",
              "entropy", "entropy_norm", "tv", "tv_cost", "point_mass", "moved", "similarity", "interchangeable",
              "convergent", "siblings", "tv_residual", "budget_left", "scale", "parent")
KEYED_KEYS = ("coupled_prob", "target_sample")   # optional event keys, written only when set (keyed noise runs)


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

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict:
        return {"version": VERSION, "method": self.method, "model": self.model, "grid": list(self.grid),
                "config": self.config,
                "tokens": list(self.tokens), "summary": self.summary,
                "steps": [{"step": s.step, "seconds": s.seconds, "drafted": [asdict(r) for r in s.drafted],
                           "events": [event_json(e) for e in s.events]} for s in self.steps]}

    @classmethod
    def from_json(cls, d: dict) -> Trace:
        """Parse a trace and check its structure (files may come from anyone): ValueError naming the first problem.
        Reads contract versions 1 (positional sibling / drafted lists) and 2 (named records)."""
        try:
            checks.want(d.get("version", 1) in (1, VERSION),
                        f"unknown version {d.get('version')!r} (this reads 1..{VERSION})")
            steps = [StepEvent(s["step"], s["seconds"], [event_from_json(e) for e in s["events"]],
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
        checks.check_structure(self)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json()))

    @classmethod
    def load(cls, path: str | Path, max_bytes: int = MAX_BYTES) -> Trace:
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


def event_json(e: TokenEvent) -> dict:
    """One event in contract version 2's form: its fields and its `groups` extension, flat, in EVENT_KEYS order."""
    flat = {f.name: getattr(e, f.name) for f in fields(TokenEvent) if f.name != "groups"}
    flat |= asdict(e.groups or Groups())
    return {k: flat[k] for k in EVENT_KEYS} | {k: flat[k] for k in KEYED_KEYS if flat[k] is not None}


_EVENT_FIELDS = {f.name for f in fields(TokenEvent)} - {"groups"}


def event_from_json(e: dict) -> TokenEvent:
    kw = {k: v for k, v in e.items() if k in _EVENT_FIELDS}
    kw.setdefault("tv_residual", kw.get("tv", 0.0))              # traces before the field: chains' value
    ext = {k: e[k] for k in GROUP_FIELDS if k in e}
    if "siblings" in ext:
        ext["siblings"] = [_record(Sibling, r) for r in ext["siblings"]]
    return TokenEvent(**kw, groups=Groups.unless_default(**ext))


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


def count_below(q_committed, below: float) -> int:
    """The number of target probabilities strictly below `below` (the implausible-code count)."""
    return int(np.sum(np.asarray(q_committed, dtype=float) < below))


def mean_nll(q_committed) -> float:
    """Mean −log q over the committed tokens' target probabilities, nats per token (q clipped at 1e-12; nan when
    there are none): the bench's and the History's NLL."""
    q = np.asarray(q_committed, dtype=float)
    return -float(np.mean(np.log(np.maximum(q, 1e-12)))) if q.size else float("nan")
