"""The app's History tab: every finished run (Generate, a slider re-run, opened traces) adds one row per method —
the knobs it ran with beside what it gave (analysis/history.py) — kept per browser session (bounded), exportable as
CSV, clearable; a run can be pinned as the reference (marked in the table), and any two runs compared side by side
(the method's image in each, and where their committing decisions differ). The events chain after the run's own
(`.then`), so the race code does not know this tab exists. app.py calls `layout` inside its tab and `wire` once."""
from __future__ import annotations

import gradio as gr
import numpy as np

from specviz.analysis import history as hist
from specviz.app import widgets as w
from specviz.app.errors import friendly
from specviz.render import draw
from specviz.render.exports import export_dir

DIFF_RGB = draw.DIFF_RGB                           # same decision, different decision (render's palette)
# the table's words kept whole (Gradio's wrap breaks a narrow column's header inside a word: "forwa/rds"); a
# header wraps only between words, and the table scrolls sideways when its columns need more than the page
# (app.py adds it to the page's CSS)
CSS = ("#hist_table th, #hist_table td, #hist_table th *, #hist_table td * {overflow-wrap: normal !important;"
       " word-break: keep-all !important; hyphens: none !important;}")


def layout(c: dict) -> None:
    w.Markdown("Every run adds a row per method: the knobs it ran with beside what it gave. Pin a run to keep it as "
               "the reference; compare any two runs (their images, and where their committing decisions differ).")
    c["history"] = gr.State(None)
    c["hist_table"] = w.Dataframe(headers=list(hist.Row.HEADERS), interactive=False, wrap=True, elem_id="hist_table")
    with gr.Row():
        c["hist_a"] = w.Number(1, label="Run A", precision=0, minimum=1, elem_id="hist_a")
        c["hist_b"] = w.Number(2, label="Run B", precision=0, minimum=1, elem_id="hist_b")
        c["hist_method"] = w.Dropdown([], label="Method", allow_custom_value=True, elem_id="hist_method")
    with gr.Row():
        c["hist_compare"] = gr.Button("Compare A and B", elem_id="hist_compare")
        c["hist_pin"] = gr.Button("Pin run A as the reference", elem_id="hist_pin")
        c["hist_csv"] = gr.Button("Download CSV", elem_id="hist_csv")
        c["hist_clear"] = gr.Button("Clear history", elem_id="hist_clear")
    c["hist_view"] = w.Image(format="png", type="pil", interactive=False, show_label=False, elem_id="hist_view")
    c["hist_file"] = gr.File(label="History CSV", interactive=False, elem_id="hist_file")


def wire(c: dict, runs: dict, export_root: str | None) -> None:
    """`runs`: source name ('generate', 'rerun', 'opened') -> the run events whose finish adds to the history."""
    quick = dict(queue=False, api_visibility="private")
    for source, events in runs.items():
        for ev in events:
            ev.then(lambda st, h, _s=source: record(st, h, _s), [c["state"], c["history"]],
                    [c["history"], c["hist_table"], c["hist_method"]], **quick)
    c["hist_pin"].click(pin, [c["history"], c["hist_a"]], [c["history"], c["hist_table"]], **quick)
    c["hist_clear"].click(clear, [c["history"]], [c["history"], c["hist_table"], c["hist_view"]], **quick)
    c["hist_compare"].click(compare, [c["history"], c["hist_a"], c["hist_b"], c["hist_method"]], [c["hist_view"]],
                            **quick)
    c["hist_csv"].click(lambda h: csv_file(h, export_root), [c["history"]], [c["hist_file"]], **quick)


def record(st, h: hist.History | None, source: str):
    """After a run: add it (once: a run already recorded — same traces — is not added again)."""
    h = h or hist.History()
    if st is None or not getattr(st, "traces", None):
        return h, h.table(), gr.skip()
    if not h.holds(st.traces):
        h.add(st.traces, st.images, source)
    return h, h.table(), gr.Dropdown(choices=list(st.traces), value=next(iter(st.traces)))


@friendly
def pin(h: hist.History | None, number):
    if not h or h.get(int(number or 0)) is None:
        raise gr.Error("Pick a run number that is in the history (Run A).")
    h.pinned = int(number)
    return h, h.table()


def clear(h: hist.History | None):
    h = h or hist.History()
    h.clear()
    return h, [], None


@friendly
def compare(h: hist.History | None, a, b, method: str):
    """Run A's and run B's image of `method`, and the cells whose committing decision differs."""
    runs = [h.get(int(n or 0)) if h else None for n in (a, b)]
    if any(r is None for r in runs):
        raise gr.Error("Pick two run numbers that are in the history (Run A and Run B).")
    if any(method not in r.kept for r in runs):
        raise gr.Error(f"Both runs must include {method or 'the chosen method'}.")
    ka, kb = (r.kept[method] for r in runs)
    diff = hist.decision_difference(ka, kb)
    panels = [(f"run {r.number} · {method} · {r.kept[method].compression:.2f}×",
               draw.upscale(r.images[method], r.kept[method].grid)) if method in r.images else
              (f"run {r.number}", draw.message("no image (opened trace)")) for r in runs]
    n = int(np.nansum(diff))
    panels.append((f"decisions differ · {n} cells", draw.upscale(draw.categorical(diff, DIFF_RGB), ka.grid)))
    legend = draw.legend([("same committing decision", DIFF_RGB[0]), ("different decision", DIFF_RGB[1]),
                          ("undecided in either", draw.NAN_RGB)], "A vs B")
    return draw.composite(panels, legend)


def csv_file(h: hist.History | None, root: str | None):
    if not h or not h.rows():
        raise gr.Error("The history is empty: generate first.")
    path = export_dir(root) / "specviz_history.csv"
    path.write_text(h.csv())
    return str(path)
