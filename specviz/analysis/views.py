"""Read-only views of a finished (or growing) Trace for the app: per-position maps (MAPS: one MapSpec record per
map, the only list of them), CASCADE groups, the attempt history of one position, and what happened at one
verification step. Pure: no model, no rendering."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from specviz.analysis import context, paired
from specviz.core.records import COMMITTING, DECISIONS, JUDGED, Groups, TokenEvent
from specviz.core.trace import Trace

NO_GROUPS = Groups()            # what an event without the `groups` extension reads as


@dataclass(frozen=True, kw_only=True)
class MapSpec:
    """One heatmap kind, defined here only: the Maps tab's sub-tab and image (`output`), the stream, the inspector's
    click, the export and the slide figure all read MAPS. `compute(trace, run)` -> (H, W) float array, NaN where
    there is nothing to show (a categorical map: the category's index); `run`: every trace of the race by method
    (the changed-vs-AR map reads AR's)."""
    key: str
    title: str                      # its tab's title, the slide's column title
    compute: Callable[[Trace, Mapping], np.ndarray]
    categorical: bool = False       # categories with a legend; else numbers on a colour scale
    unit: str = ""                  # what a numeric map's numbers are in (its colourbar)
    label: str = ""                 # a numeric map's colourbar text in the app
    cmap: str = "viridis"
    vmax: float = 1.0
    scale: str = "shared"           # 'fixed': 0..vmax; 'shared': 0..the max over the run's methods
    drawing: str = "numeric"        # render/panels.py's drawing: "numeric" (colour scale) or a categorical map's own
    needs_groups: bool = False      # drawn only when a method of the run forms groups (else a note, not exported)
    slide: bool = False             # a column of the exported 16:9 slide figure

    @property
    def output(self) -> str:
        """Its image's component / output name (and the export's file name part)."""
        return f"map_{self.key}"

    @property
    def tab_id(self) -> str:
        return f"tab_{self.key}"

    @property
    def colourbar(self) -> str:
        return f"{self.title} [{self.unit}]" if self.unit else self.title


MAPS: dict[str, MapSpec] = {}       # the registry, in tab order


def register(spec: MapSpec) -> MapSpec:
    if spec.key in MAPS:
        raise ValueError(f"map {spec.key!r} is already registered")
    MAPS[spec.key] = spec
    return spec


def map_outputs() -> tuple[str, ...]:
    """Every map's output name, in tab order (read at each call: a map registered later appears)."""
    return tuple(spec.output for spec in MAPS.values())


def by_output(by_kind: dict) -> dict:
    """{kind: value} -> {its map's output name: value}."""
    return {MAPS[k].output: v for k, v in by_kind.items()}


def _committed(name: str) -> Callable[[Trace, Mapping], np.ndarray]:
    return lambda trace, run: trace.to_grid(name)


register(MapSpec(key="entropy", title="Entropy", compute=_committed("entropy"), unit="nats",
                 label="H(q) at commit [nats]", slide=True))
register(MapSpec(key="tv", title="TV(p, q)", compute=lambda t, run: _last_judged_field(t, "tv"),
                 unit="TV distance, 0-1", cmap="magma", scale="fixed", slide=True,
                 label="TV(draft law p, target law q) of the last judged draft (tree siblings after the first: still "
                       "against q; the inspector also shows TV against the running residual)"))
register(MapSpec(key="decision", title="Decisions", compute=_committed("decision"), categorical=True,
                 drawing="decision", slide=True))
register(MapSpec(key="finalize", title="Finalize step", compute=_committed("finalize"), unit="target forward",
                 cmap="plasma", label="target forward that committed the cell", slide=True))
register(MapSpec(key="tv_cost", title="TV cost", compute=_committed("tv_cost"), unit="TV distance, 0-1",
                 cmap="inferno", slide=True,
                 label="relaxation cost TV(o, q) of the cell's output law (trees: the level's whole sibling walk)"))
register(MapSpec(key="accept", title="Acceptance b", compute=lambda t, run: _committed_draft_field(t, "accept_prob"),
                 unit="probability, 0-1", scale="fixed",           # viridis as the live preview's b'
                 label="acceptance probability b of the committed draft; none: a sampled token (AR steps, resampled "
                       "and bonus tokens)"))
register(MapSpec(key="groups", title="Groups", compute=lambda t, run: group_category(group_cells(t), t.grid),
                 categorical=True, drawing="groups", needs_groups=True))
register(MapSpec(key="missing", title="Missing context", compute=lambda t, run: context.missing_context(t),
                 unit="positions", cmap="cividis",
                 label="raster-earlier positions not yet decided when the cell was committed (0 for raster methods)"))
register(MapSpec(key="changed", title="Changed vs AR", compute=lambda t, run: paired.changed_category(t, run["ar"]),
                 categorical=True, drawing="changed"))


def numeric_map(trace: Trace, key: str) -> np.ndarray:
    """(H, W) float map of a numeric kind; NaN where undecided (or, for tv, where nothing was judged)."""
    return MAPS[key].compute(trace, {})


def shared_range(arrays: list[np.ndarray], spec: MapSpec) -> tuple[float, float]:
    """Colour range shared by every method's map of one kind."""
    if spec.scale == "fixed":
        return 0.0, spec.vmax
    finite = [a[np.isfinite(a)] for a in arrays]
    top = max((float(f.max()) for f in finite if f.size), default=0.0)
    return 0.0, max(top, 1e-3)


def decision_map(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """(H, W) index into trace.DECISIONS of the committing decision (NaN undecided) and a bool map of cells that
    saw at least one rejected draft before they were committed."""
    h, w = trace.grid
    rejected = np.zeros(h * w, bool)
    for _, ev in trace.events():
        if ev.decision == "rejected":
            rejected[ev.pos] = True
    return MAPS["decision"].compute(trace, {}), rejected.reshape(h, w)


def _last_judged_field(trace: Trace, name: str) -> np.ndarray:
    h, w = trace.grid
    out = np.full(h * w, np.nan)
    for _, ev in trace.events():
        if ev.decision in JUDGED:
            out[ev.pos] = float(getattr(ev, name))
    return out.reshape(h, w)


def _committed_draft_field(trace: Trace, name: str) -> np.ndarray:
    """A field of each cell's committing event where that event is a judged draft (accepted exactly or by
    relaxation: the draft that decided the cell); NaN where the committed token was sampled, not judged."""
    h, w = trace.grid
    out = np.full(h * w, np.nan)
    for pos, (_, ev) in trace.committing().items():
        if ev.decision in JUDGED:
            out[pos] = float(getattr(ev, name))
    return out.reshape(h, w)


def decided_mask(trace: Trace, upto_step: int | None = None) -> np.ndarray:
    """(H, W) bool: positions committed by steps 0..upto_step (all steps when None)."""
    h, w = trace.grid
    out = np.zeros(h * w, bool)
    for _, ev in trace.events(upto_step):
        if ev.commits:
            out[ev.pos] = True
    return out.reshape(h, w)


# ---------------------------------------------------------------------------------------------------- CASCADE groups
@dataclass(frozen=True)
class GroupCell:
    """CASCADE group of the deciding candidate at one position (node ids mapped to grid positions)."""
    pos: int
    step: int
    node: int
    interchangeable: tuple     # positions of I(n) members (siblings: the same cell, alternative tokens)
    convergent: tuple          # positions of C(n) members
    members: int               # distinct member nodes of I(n) ∪ C(n)
    relaxed: bool
    similarity: float


def group_cells(trace: Trace) -> list[GroupCell]:
    """One GroupCell per position that had a judged tree candidate: the last one judged there (the accepted one when
    a draft was accepted, else the last rejected sibling). Node ids map to positions through the step's Drafted
    records; node 0, the step's root (a member of C(n) for level-1 nodes in the paper reading), sits one position
    before the first level."""
    cells: dict[int, GroupCell] = {}
    for st in trace.steps:
        node_pos = {r.node: r.pos for r in st.drafted}
        if st.drafted and 0 not in node_pos:
            node_pos[0] = min((r.pos for r in st.drafted if r.parent == 0), default=st.drafted[0].pos) - 1
        for ev in st.events:
            if ev.decision not in JUDGED:
                continue
            g = ev.groups or NO_GROUPS
            cells[ev.pos] = GroupCell(ev.pos, st.step, ev.node,
                                      tuple(node_pos.get(int(m), ev.pos) for m in g.interchangeable),
                                      tuple(node_pos.get(int(m), ev.pos) for m in g.convergent),
                                      len(set(g.interchangeable) | set(g.convergent)),
                                      ev.decision == "relaxed", g.similarity)
    return [cells[p] for p in sorted(cells)]


def group_category(cells: list[GroupCell], grid) -> np.ndarray:
    """(H, W) category: NaN not judged, 0 judged without group, 1 interchangeable only, 2 convergent only, 3 both."""
    h, w = grid
    out = np.full(h * w, np.nan)
    for c in cells:
        out[c.pos] = (1 if c.interchangeable else 0) + (2 if c.convergent else 0)
    return out.reshape(h, w)


# ---------------------------------------------------------------------------------------------------- inspector
@dataclass(frozen=True)
class Attempt:
    step: int
    event: TokenEvent
    members: tuple             # group candidates (the `groups` extension):
    #                            (node, token, q, cos, child_cos, level, in_I, in_C)


def attempts(trace: Trace, pos: int) -> list[Attempt]:
    """Every event at `pos` in order (judged drafts, the resampled / bonus / ar token)."""
    out = []
    for step, ev in trace.events():
        if ev.pos == pos:
            g = ev.groups or NO_GROUPS
            inter, conv = set(g.interchangeable), set(g.convergent)
            members = tuple((r.node, r.token, r.q, r.cos, r.child_cos, r.level, r.node in inter, r.node in conv)
                            for r in g.siblings)
            out.append(Attempt(step, ev, members))
    return out


# ---------------------------------------------------------------------------------------------------- replay
@dataclass(frozen=True)
class StepView:
    """What one verification step did, for the replay view."""
    step: int
    forwards: int              # steps in the run
    drafted: tuple             # positions proposed (one entry per drafted node)
    counts: dict               # decision -> count in this step
    committed_before: int
    committed_after: int
    first_pos: int             # first position the step decided (-1 if none)
    last_pos: int
    events: tuple              # the step's TokenEvents


def step_view(trace: Trace, step: int) -> StepView:
    step = max(0, min(step, len(trace.steps) - 1))
    before = int(decided_mask(trace, step - 1).sum()) if step > 0 else 0
    st = trace.steps[step]
    counts = {d: 0 for d in DECISIONS}
    for ev in st.events:
        counts[ev.decision] += 1
    poss = [ev.pos for ev in st.events]
    after = before + sum(ev.decision in COMMITTING for ev in st.events)
    return StepView(step, len(trace.steps), tuple(r.pos for r in st.drafted), counts, before, after,
                    min(poss, default=-1), max(poss, default=-1), tuple(st.events))


def step_caption(trace: Trace, v: StepView) -> str:
    """One line of what happened at this step."""
    n = trace.grid[0] * trace.grid[1]
    head = f"{trace.method} · target forward {v.step + 1} of {v.forwards}: "        # counted as the lanes count
    if v.step == 0:
        return head + f"prefill encodes the prompt and samples the first token (1/{n} committed)."
    c = v.counts
    if not v.drafted:
        return head + f"plain AR — one token sampled at position {v.first_pos} ({v.committed_after}/{n} committed)."
    drafted = sorted(set(v.drafted))
    span = f"{drafted[0]}" if len(drafted) == 1 else f"{drafted[0]}–{drafted[-1]}"
    what = (f"drafted a tree of {len(v.drafted)} nodes — alternative tokens for positions {span}"
            if len(v.drafted) > len(drafted) else f"drafted {len(v.drafted)} tokens for positions {span}")
    parts = [what,
             f"{c['exact']} accepted exactly", f"{c['relaxed']} by relaxation", f"{c['rejected']} rejected"]
    if c["resampled"]:
        parts.append("1 resampled from the residual")
    if c["bonus"]:
        parts.append("1 bonus token")
    gained = v.committed_after - v.committed_before
    return head + "; ".join(parts) + f" → +{gained} committed ({v.committed_after}/{n})."
