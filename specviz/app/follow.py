"""The inspected cell follows the run and is shown everywhere. The cell lives in the `focus` state as a `Cell`
(method, position), set by every click that inspects one — never read back out of the inspector's HTML:
- after any run (Generate, a slider re-run, opened traces) the inspector shows the same cell of the new run, or says
  that the cell's method is not in the new run (and the cell is let go); it never keeps a stale record;
- after every click that inspects a cell the cell is ringed in every lane's image and every map (render/focus.py),
  so the audience sees the same token everywhere; a run draws its final pictures with the ring of the cell kept in
  `focus`, so a re-run keeps it.
Chained after the run and click events (`.then`), so the inspector code does not know about it. Every update sends
values, never gr.skip() on the common paths (each skip leaves a component copy in the session: docs/gradio.md)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from PIL import Image

from specviz.analysis.views import by_output, map_outputs
from specviz.app.edge import wire as wire_names
from specviz.app.present import lead_lane
from specviz.app.race import RACE_PX
from specviz.engine.registry import METHODS
from specviz.render import draw, html, panels, primer


class Cell(NamedTuple):
    """The inspected cell: a lane's method and a position on its grid (the `focus` state's value; None: none)."""
    method: str
    pos: int


def inspecting(trace, pos: int, cards) -> tuple[str, Cell]:
    """A click inspected `trace`'s cell `pos` (`cards`: the run's): the inspector's fragment and the cell, for
    (inspector, focus)."""
    return html.inspector(trace, pos, cards), Cell(trace.method, int(pos))


def refresh(st, cell: Cell | None, shown: str) -> tuple[str, Cell | None]:
    """(inspector, focus) for the new run `st`: the inspected cell of the new run; `shown` itself when nothing was
    inspected (a value, not gr.skip(), which would leave a copy of the component in the session: docs/gradio.md);
    a note, and no cell, when the cell's method did not run. A `shown` that is not text (a raw client's junk: the
    inspector's value comes from the browser) is not sent back: an empty inspector instead."""
    if cell is None or st is None or not getattr(st, "traces", None):
        return (shown if isinstance(shown, str) else ""), cell
    method, pos = cell
    if method not in st.traces:
        return (f"<i>The cell you inspected ({method}, position {pos}) is not in this run: {method} did not run. "
                "Click a cell to inspect it.</i>"), None
    return inspecting(st.traces[method], pos, st.cards)


def marked(st, cell: Cell | None) -> int | None:
    """The inspected cell's position, when there is one and it lies on the run's grid (else None)."""
    if cell is None or st is None or not getattr(st, "traces", None):
        return None
    grid = next(iter(st.traces.values())).grid
    return cell.pos if cell.pos < grid[0] * grid[1] else None


def _inspected_lane(st, cell: Cell | None) -> str | None:
    """The inspected cell's method, when that method is in the run `st`."""
    return cell.method if cell is not None and cell.method in st.traces else None


def map_lane(st, cell: Cell | None, present: bool) -> str | None:
    """The one lane whose panel each map draws in Present mode (so its labels stay large at any method count): the
    inspected cell's method when it is in the run, else the run's first relaxed one (present.lead_lane); None (every
    lane) outside Present mode."""
    if not present or st is None or not getattr(st, "traces", None):
        return None
    return _inspected_lane(st, cell) or lead_lane(st.traces, st.cards)


def primer_of(st, cell: Cell | None) -> str:
    """The primer's walk for the inspected cell's lane, else the run's first method that drafts (else its first)."""
    if st is None or not getattr(st, "traces", None):
        return primer.primer_html(None)
    lane = _inspected_lane(st, cell) or next((m for m in st.traces if m != "ar"), next(iter(st.traces)))
    return primer.primer_html(st.traces[lane])


def lane_pictures(st, mark: int | None = None) -> dict:
    """Every lane's finished picture by output name: the final image (cell `mark` ringed), a note where the run has no
    decoded image (an opened trace of a model not offered here), None for a method not in the run."""
    out = {}
    for m in METHODS:
        t, im = st.traces.get(m), st.images.get(m)
        out[f"img_{m}"] = (None if t is None else draw.message(f"{m}: no image ({t.model} not decoded here)")
                           if im is None else panels.race_frame(Image.fromarray(im), np.ones(t.grid, bool), t.grid,
                                                                RACE_PX, mark))
    return out


def outlined(inputs: dict) -> dict:
    """After a click: {state, focus, opacity, present} -> every lane's picture and every map with the inspected cell
    ringed (in Present mode the maps of the inspected lane); no update when the click inspected no cell."""
    st, pos = inputs["state"], marked(inputs["state"], inputs["focus"])
    if pos is None:
        return {}
    only = map_lane(st, inputs["focus"], inputs.get("present", False))
    maps = panels.heatmaps(st.traces, st.images, float(inputs["opacity"]), pos, only, cards=st.cards)
    return lane_pictures(st, pos) | by_output(maps)


# A click that inspects: every click runs ("multiple"; Gradio's default "once" dropped a click made while the last one
# was still answering, so the inspector stayed on the cell before), one at a time in the order made
CLICK = dict(concurrency_id="inspect", concurrency_limit=1, show_progress="hidden", api_visibility="private",
             trigger_mode="multiple")

# The ring after a click: one asked for while the last one is still drawing runs once more after it ("always_last"),
# reading the cell then in `focus` (Gradio's default "once" dropped it: two quick clicks left the ring on the first
# cell); one at a time, so an older ring never lands after a newer one
RING = dict(concurrency_id="ring", concurrency_limit=1, show_progress="hidden", api_visibility="private",
            trigger_mode="always_last")


def wire(c: dict, runs: list, clicks: list) -> None:
    """`runs`: the run events (the inspector follows; the run itself rings the cell kept in `focus`); `clicks`: the
    inspecting events, which set (inspector, focus) — then the ring and the primer follow the cell."""
    pictures = {n: c[n] for n in (*(f"img_{m}" for m in METHODS), *map_outputs())}
    inputs = {"state": c["state"], "focus": c["focus"], "opacity": c["opacity"], "present": c["present_on"]}
    # no progress text: Gradio's "0.2s" over the inspector flickered on every run and click (a calm screen)
    quiet = dict(queue=False, show_progress="hidden", api_visibility="private", trigger_mode="always_last")
    for ev in runs:
        ev.then(refresh, [c["state"], c["focus"], c["inspector"]], [c["inspector"], c["focus"]], **quiet) \
            .then(primer_of, [c["state"], c["focus"]], [c["primer"]], **quiet)
    for ev in clicks:
        wire_names(ev.then, outlined, inputs, pictures, **RING)
        ev.then(primer_of, [c["state"], c["focus"]], [c["primer"]], **quiet)
