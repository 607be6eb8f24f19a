"""The tuning history: every run (Generate, a slider re-run, a sweep point opened) appends one row per method — the
knob values it ran with and what it gave — so a setting is always seen beside its result. Rows are read from the
traces alone (summary, committed events), kept per session, bounded (a run keeps its rows, images and decision
map, not its traces), exportable as CSV; a run can be pinned as the
reference the next ones are compared with, and any two runs compared side by side (decision difference map).
"""
from __future__ import annotations

import csv
import io
import math
import weakref
from collections import deque
from dataclasses import dataclass, field, fields

import numpy as np

from specviz.analysis import paired, views
from specviz.core.trace import mean_nll
from specviz.engine.registry import Recomputed, ui_knobs

MAX_RUNS = 50                   # runs kept per session (the oldest drop out first)
SLIDERS = Recomputed(lambda: ui_knobs("main"))     # the knobs a row carries: the registry's sliders beside the methods


def target_nll(trace) -> float:
    """Mean -log q(x) over the committed tokens, nats per token (q clipped at 1e-12): the bench's NLL column."""
    return mean_nll([ev.p_target for _, ev in trace.committing().values()])


@dataclass(frozen=True)
class Row:
    """One method of one run."""
    run: int                    # run number within the session (1, 2, ...)
    source: str                 # generate | rerun | sweep | opened
    method: str
    seed: int
    knobs: dict                 # knob name -> value as run, one per slider (SLIDERS; NaN where the config has none)
    forwards: int
    compression: float          # tokens per target forward
    relaxed_share: float        # relaxed accepts / accepted drafts
    tv_cost: float              # Σ per-token TV cost (the bound on the image's TV)
    implausible: int            # committed codes with target q < 0.001
    nll: float                  # target NLL, nats per token
    seconds: float              # the method's own compute time
    changed: int | None = None  # keyed noise: tokens changed against the same run's AR (None: nothing compared)

    HEADERS = Recomputed(lambda: ("run", "source", "method", "seed", *(k.sym for k in SLIDERS), "forwards",
                            "step compression", "relaxed share", "TV cost", "implausible", "NLL nats/token", "time s",
                            "changed vs AR"))

    def __getattr__(self, name):                # row.lam: a slider's value, read from `knobs`
        knobs = self.__dict__.get("knobs", {})
        if name in knobs:
            return knobs[name]
        raise AttributeError(name)

    def values(self) -> list:
        """One value per slider, in SLIDERS' order (NaN for a slider registered after this row was made)."""
        return [self.knobs.get(k.name, math.nan) for k in SLIDERS]

    def cells(self) -> list:
        return [self.run, self.source, self.method, self.seed, *self.values(),
                self.forwards, round(self.compression, 3), round(self.relaxed_share, 3), round(self.tv_cost, 4),
                self.implausible, round(self.nll, 4), round(self.seconds, 2),
                NOT_COMPARED if self.changed is None else self.changed]

    def csv_cells(self) -> list:
        """The CSV's values: the record's fields with `knobs` spread into one value per slider (csv_header)."""
        out = []
        for f in fields(self):
            out += self.values() if f.name == "knobs" else [getattr(self, f.name)]
        return out


def csv_header() -> list[str]:
    """The CSV's columns: the record's field names, `knobs` spread into the sliders' names."""
    return [n for f in fields(Row) for n in ([k.name for k in SLIDERS] if f.name == "knobs" else [f.name])]


NOT_COMPARED = "—"              # the changed-vs-AR cell of a run with no keyed AR to compare with


def row_of(trace, run: int, source: str, changed: int | None = None) -> Row:
    """One method's row; `changed`: its tokens changed against the same run's AR (paired.against_ar), if compared."""
    s, c = trace.summary, trace.config
    knobs = {k.name: float(c.get(k.name, math.nan)) for k in SLIDERS}
    return Row(run, source, trace.method, int(c.get("seed", 0)), knobs,
               int(s["target_forwards"]), s["tokens"] / max(1, s["target_forwards"]),
               s["relaxed"] / max(1, s["accepted_drafts"]), sum(ev.tv_cost for _, ev in trace.committing().values()),
               trace.implausible(),
               target_nll(trace), float(sum(st.seconds for st in trace.steps)), changed)


@dataclass(frozen=True)
class Kept:
    """What the history keeps of one method's run besides its row: enough to compare two runs (decision map,
    grid, step compression), not the trace — a trace weighs ~0.4 MB, and a served session holds MAX_RUNS runs."""
    decisions: np.ndarray       # (H, W) index into DECISIONS of the committing decision, NaN undecided
    compression: float          # the trace's summary step_compression

    @classmethod
    def of(cls, trace) -> "Kept":
        return cls(views.decision_map(trace)[0], float(trace.summary["step_compression"]))

    @property
    def grid(self) -> tuple:
        return tuple(self.decisions.shape)


@dataclass
class Run:
    number: int
    source: str
    kept: dict                  # method -> Kept
    images: dict                # method -> (h, w, 3) uint8
    rows: list = field(default_factory=list)
    made_of: tuple = ()         # weak references to the traces it was made from (History.holds)


@dataclass
class History:
    """A session's runs, newest last, at most MAX_RUNS; `pinned` is the reference run's number (or None)."""
    runs: deque = field(default_factory=lambda: deque(maxlen=MAX_RUNS))
    pinned: int | None = None
    count: int = 0

    def add(self, traces: dict, images: dict, source: str) -> Run:
        self.count += 1
        run = Run(self.count, source, {m: Kept.of(t) for m, t in traces.items()}, dict(images),
                  made_of=tuple(weakref.ref(t) for t in traces.values()))
        vs = paired.against_ar(traces)
        run.rows = [row_of(t, self.count, source, vs.get(m) if m != "ar" else None) for m, t in traces.items()]
        self.runs.append(run)
        if self.pinned is not None and all(r.number != self.pinned for r in self.runs):
            self.pinned = None                                   # the reference dropped out of the window
        return run

    def holds(self, traces: dict) -> bool:
        """Whether the newest run was made from these very traces (a run is recorded once)."""
        made = self.runs[-1].made_of if self.runs else ()
        return len(made) == len(traces) and all(r() is t for r, t in zip(made, traces.values()))

    def get(self, number: int) -> Run | None:
        return next((r for r in self.runs if r.number == number), None)

    def rows(self) -> list[Row]:
        return [row for run in self.runs for row in run.rows]

    def table(self) -> list[list]:
        """Rows for the app's table, newest run first; the pinned run's rows are marked '📌'."""
        out = []
        for run in reversed(self.runs):
            for row in run.rows:
                cells = row.cells()
                cells[0] = f"{row.run} 📌" if row.run == self.pinned else row.run
                out.append(cells)
        return out

    def csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(csv_header())
        for row in self.rows():
            w.writerow(row.csv_cells())
        return buf.getvalue()

    def clear(self) -> None:
        self.runs.clear()
        self.pinned = None


def decision_difference(a: Kept, b: Kept) -> np.ndarray:
    """(H, W) float: 1 where the two runs committed their cell by a different decision, 0 where the same, NaN
    where either left it undecided (same grid required)."""
    if list(a.grid) != list(b.grid):
        raise ValueError(f"runs on different grids ({a.grid} vs {b.grid}) cannot be compared cell by cell")
    da, db = a.decisions, b.decisions
    out = (da != db).astype(float)
    out[~(np.isfinite(da) & np.isfinite(db))] = np.nan
    return out
