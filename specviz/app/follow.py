"""The inspector follows the run: after any run (Generate, a slider re-run, opened traces) it shows the same cell of
the new run — read from the inspector's own fragment (render.html.inspected) — or says that the cell's method is not
in the new run; it never keeps a stale record. Chained after the run events (`.then`)."""
from __future__ import annotations

import gradio as gr

from specviz.render import html


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


def wire(c: dict, events: list) -> None:
    for ev in events:
        ev.then(refresh, [c["state"], c["inspector"]], [c["inspector"]], queue=False, api_visibility="private")
