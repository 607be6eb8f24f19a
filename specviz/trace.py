"""Typed trace records (design.md §4): what happened at every judged token of every verification step.

Plain Python scalars only, so a trace round-trips through JSON exactly. `to_grid(field)` maps any per-position
field of the committing event onto the (H, W) token grid; the renderer and the app read only this.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

DECISIONS = ("exact", "relaxed", "rejected", "resampled", "bonus", "ar")
COMMITTING = frozenset({"exact", "relaxed", "resampled", "bonus", "ar"})


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
    tv: float = 0.0              # TV(p, q) at this slot
    tv_cost: float = 0.0         # TV(o, q) of this position's output law (0 for lossless)
    point_mass: bool = True      # the draft law was a point mass
    moved: float = 0.0           # tree rules: target mass granted to x beyond q(x) (CASCADE: against the budget)
    similarity: float = 0.0      # CASCADE: largest cosine to a group member
    interchangeable: list = field(default_factory=list)   # CASCADE: node ids of I(n)
    convergent: list = field(default_factory=list)        # CASCADE: node ids of C(n)
    siblings: list = field(default_factory=list)          # CASCADE re-scoring: [node, token, q(token), cos, child_cos]
    lantern_cs: list = field(default_factory=list)        # LANTERN re-scoring: cumulative neighbour mass s_1..s_k

    @property
    def commits(self) -> bool:
        return self.decision in COMMITTING


@dataclass(frozen=True)
class StepEvent:
    step: int                    # target forward index (0 = prefill)
    seconds: float
    events: list                 # list[TokenEvent]
    drafted: list = field(default_factory=list)   # [[node, parent, pos, token], ...] what was fed / proposed


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
    def committing(self) -> dict[int, tuple[int, TokenEvent]]:
        """pos -> (step, committing event)."""
        out = {}
        for st in self.steps:
            for ev in st.events:
                if ev.commits:
                    out[ev.pos] = (st.step, ev)
        return out

    def to_grid(self, name: str) -> np.ndarray:
        """(H, W) float array of a per-position field: finalize (step), attempts, decision (index into
        DECISIONS), or any numeric TokenEvent field of the committing event. NaN where undecided."""
        h, w = self.grid
        out = np.full(h * w, np.nan)
        if name == "attempts":
            for st in self.steps:
                for ev in st.events:
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
        n_pos = self.grid[0] * self.grid[1]
        forwards = len(self.steps)
        decisions = [ev.decision for st in self.steps for ev in st.events]
        per_step = [sum(ev.commits for ev in st.events) for st in self.steps]
        accepted = [sum(ev.decision in ("exact", "relaxed") for ev in st.events) for st in self.steps[1:]]
        com = self.committing()
        self.summary = {
            "target_forwards": forwards, "tokens": len(com),
            "step_compression": round(n_pos / max(1, forwards), 4), "seconds": round(seconds, 4),
            "mean_accepted": round(float(np.mean(per_step[1:])) if len(per_step) > 1 else 1.0, 4),
            "accepted_drafts": int(sum(accepted)), "relaxed": decisions.count("relaxed"),
            "rejected": decisions.count("rejected"), "tv_cost": round(sum(ev.tv_cost for _, ev in com.values()), 4),
            "accepted_hist": np.bincount(per_step[1:], minlength=1).tolist() if len(per_step) > 1 else [0],
        }
        return self.summary

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict:
        return {"method": self.method, "model": self.model, "grid": list(self.grid), "config": self.config,
                "tokens": list(self.tokens), "summary": self.summary,
                "steps": [{"step": s.step, "seconds": s.seconds, "drafted": s.drafted,
                           "events": [asdict(e) for e in s.events]} for s in self.steps]}

    @classmethod
    def from_json(cls, d: dict) -> "Trace":
        names = {f.name for f in fields(TokenEvent)}
        try:
            steps = [StepEvent(s["step"], s["seconds"], [TokenEvent(**{k: v for k, v in e.items() if k in names})
                                                         for e in s["events"]], s.get("drafted", []))
                     for s in d["steps"]]
            return cls(d["method"], d["model"], list(d["grid"]), dict(d["config"]), list(d["tokens"]), steps,
                       dict(d.get("summary", {})))
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"not a specviz trace: {e}") from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json()))

    @classmethod
    def load(cls, path: str | Path) -> "Trace":
        try:
            return cls.from_json(json.loads(Path(path).read_text()))
        except json.JSONDecodeError as e:
            raise ValueError(f"not a specviz trace (bad JSON: {e})") from None
