"""The inspected cell follows the run and is shown everywhere:
- after any run (Generate, a slider re-run, opened traces) the inspector shows the same cell of the new run — read
  from the inspector's own fragment (render.html.inspected) — or says that the cell's method is not in the new run;
  it never keeps a stale record;
- after every click that inspects a cell, and after every run, the cell is ringed in every lane's image and every
  map (render/focus.py), so the audience sees the same token everywhere.
Chained after the run and click events (`.then`), so the race and inspector code do not know about it."""
from __future__ import annotations

import gradio as gr
import numpy as np
from PIL import Image

from specviz.app.edge import wire as wire_names
from specviz.app.session import RACE_PX
from specviz.engine.config import METHODS
from specviz.render import html, panels


def refresh(st, shown: str):
    """The inspector for the new run `st` at the cell `shown` described (unchanged when nothing was inspected)."""
    cell = html.inspected(shown)
    if cell is None or st is None or not getattr(st, "traces", None):
        return gr.skip()
    method, pos = cell
    if method not in st.traces:
        return (f"<i>The cell you inspected ({method}, position {pos}) is not in this run: {method} did not run. "
                "Click a cell to inspect it.</i>")
    return html.inspector(st.traces[method], pos)


def marked(st, shown: str) -> int | None:
    """The position the inspector shows, when it lies on the run's grid (else None: nothing to ring)."""
    cell = html.inspected(shown)
    if cell is None or st is None or not getattr(st, "traces", None):
        return None
    grid = next(iter(st.traces.values())).grid
    return cell[1] if cell[1] < grid[0] * grid[1] else None


def outlined(inputs: dict) -> dict:
    """{state, inspector, opacity} -> every finished lane's image and every map with the inspected cell ringed (no
    update when no cell is inspected). A lane without a decoded image (an opened trace of a model not offered here)
    keeps its note."""
    st, pos = inputs["state"], marked(inputs["state"], inputs["inspector"])
    if pos is None:
        return {}
    upd = {f"img_{m}": panels.race_frame(Image.fromarray(st.images[m]), np.ones(t.grid, bool), t.grid, RACE_PX, pos)
           for m, t in st.traces.items() if m in st.images}
    maps = panels.heatmaps(st.traces, st.images, float(inputs["opacity"]), pos)
    return upd | {f"map_{k}": im for k, im in maps.items()}


def wire(c: dict, runs: list, clicks: list) -> None:
    """`runs`: the run events (the inspector follows, then the ring); `clicks`: the inspecting events (the ring)."""
    pictures = {n: c[n] for n in (*(f"img_{m}" for m in METHODS), *(f"map_{k}" for k in panels.KINDS))}
    inputs = {"state": c["state"], "inspector": c["inspector"], "opacity": c["opacity"]}
    ring = dict(concurrency_id="preview", concurrency_limit=4, show_progress="hidden", api_visibility="private")
    for ev in runs:
        after = ev.then(refresh, [c["state"], c["inspector"]], [c["inspector"]], queue=False, api_visibility="private")
        wire_names(after.then, outlined, inputs, pictures, **ring)
    for ev in clicks:
        wire_names(ev.then, outlined, inputs, pictures, **ring)
