"""The page's setting in its URL: `?prompt=…&seed=3&methods=ar,sjd,csd&noise=keyed&lam=0.5&delta=0.3` opens the page
with those controls and runs once; "Copy link" writes the controls' values the same way. Every control of a run is a
parameter by its RunConfig name (GEN_INPUTS: prompt, seed, model, methods, every knob the app shows); `present`
belongs to the page (app/present.py reads it). A value that cannot be used is left at the page's own with one line
saying so; a number outside its control's range is clamped with the line a typed value gets (app/pinned.py)."""
from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

import gradio as gr

from specviz.app import widgets as w
from specviz.app.edge import wire
from specviz.app.handlers import GEN_INPUTS
from specviz.core.knobs import Knob
from specviz.engine.registry import METHODS, ui_knobs

PAGE_KEYS = ("present",)                        # read by the page's own script, not a control
MAX_PROMPT = 500


def _num(v: float) -> str:
    return f"{v:g}"


def clamp_note(name: str, raw: str, lo: float, hi: float, used: float) -> str:
    """The typed value's clamping line (app/pinned.py writes it under the box), for a URL parameter."""
    return f"{name}={raw} is outside {_num(lo)}–{_num(hi)}: set to {_num(used)}, and the run uses {_num(used)}."


def _knob(k: Knob, raw: str, notes: list):
    """A knob's value from the URL's text, or None (with a note) when it cannot be used."""
    if k.choices:
        if raw in k.choices:
            return raw
        notes.append(f"{k.name}={raw} is not one of {', '.join(k.choices)}: the page keeps its own.")
        return None
    if k.kind is str:
        notes.append(f"{k.name} cannot be set from a link: the page keeps its own.")     # the drafter: a model name
        return None
    try:
        v = float(raw)
    except ValueError:
        v = float("nan")
    if v != v or v in (float("inf"), float("-inf")):
        notes.append(f"{k.name}={raw} is not a finite number: the page keeps its own.")
        return None
    if k.kind is int and not v.is_integer():
        notes.append(f"{k.name}={raw} is not a whole number: the page keeps its own.")
        return None
    lo = k.ui_lo if k.ui_lo is not None else k.lo
    hi = k.ui_hi if k.ui_hi is not None else k.hi
    used = min(max(v, lo), hi)
    if used != v:
        notes.append(clamp_note(k.name, raw, lo, hi, used))
    return int(used) if k.kind is int else used


def read(query: Mapping[str, str], models: tuple) -> tuple[dict, list[str]]:
    """The controls a URL's query sets ({name: value}) and one line per value it could not use as given."""
    knobs = {k.name: k for k in ui_knobs()}
    values, notes = {}, []
    for key, raw in query.items():
        raw = raw.strip()
        if key in PAGE_KEYS:
            continue
        if key == "prompt":
            values["prompt"] = raw[:MAX_PROMPT]
            if len(raw) > MAX_PROMPT:
                notes.append(f"prompt is longer than {MAX_PROMPT} characters: cut there.")
        elif key == "seed":
            if raw.isdigit():
                values["seed"] = int(raw)
            else:
                notes.append(f"seed={raw} is not a whole number ≥ 0: the page keeps its own.")
        elif key == "model":
            if raw in models:
                values["model"] = raw
            else:
                notes.append(f"model={raw} is not offered here ({', '.join(models)}): the page keeps its own.")
        elif key == "methods":
            asked = [m.strip() for m in raw.split(",") if m.strip()]
            unknown = [m for m in asked if m not in METHODS]
            if unknown:
                notes.append(f"methods: {', '.join(unknown)} not known (known: {', '.join(METHODS)}).")
            if [m for m in asked if m in METHODS]:
                values["methods"] = [m for m in METHODS if m in asked]
        elif key in knobs:
            v = _knob(knobs[key], raw, notes)
            if v is not None:
                values[key] = v
        else:
            notes.append(f"{key} is not a setting of this page: ignored.")
    return values, notes


def query(values: Mapping) -> str:
    """'?prompt=…&seed=…&methods=a,b&…': the controls' values in GEN_INPUTS order (not the drafter: a link names no
    model path)."""
    free_text = {k.name for k in ui_knobs() if k.kind is str and not k.choices}
    out = {}
    for name in GEN_INPUTS:
        v = values.get(name)
        if v is None or name in free_text:
            continue
        out[name] = ",".join(v) if name == "methods" else _num(v) if isinstance(v, float) else str(v)
    return "?" + urlencode(out)


def loader(models: tuple):
    """The page-load handler: the URL's settings go to the controls (its notes to one toast); no setting, no run (a
    silent gr.Error stops the chained run)."""
    def on_load(inputs: dict) -> dict:
        request = inputs.get("request")
        params = dict(request.query_params) if request is not None else {}
        values, notes = read(params, models)
        if notes:
            gr.Warning(" ".join(notes), title="Link")
        if not values:
            raise gr.Error("no setting in the link", visible=False, print_exception=False)
        return values
    return on_load


def copy(inputs: dict) -> dict:
    """'Copy link': the controls' values as a link (the page's script puts it in the address bar and the clipboard)."""
    return {"link": query(inputs)}


# after "Copy link": the query goes into the address bar (so a reload or a bookmark keeps it) and to the clipboard
COPY_JS = """
(q) => {
  const url = location.origin + location.pathname + q + (document.body.classList.contains('sv-present') ?
              '&present=1' : '');
  history.replaceState(null, '', url);
  if (navigator.clipboard) navigator.clipboard.writeText(url).catch(() => {});
  return url;
}
"""


def layout(c: dict) -> None:
    """'Copy link' and the link it wrote (in the Export / open tab)."""
    w.Markdown("Share this setting: the link opens the page with these controls and runs once.")
    with gr.Row():
        c["copy_link"] = gr.Button("Copy link", elem_id="copy_link", scale=0, min_width=120)
        c["link"] = w.Textbox("", show_label=False, interactive=False, elem_id="link", max_lines=1)


def wire_link(demo: gr.Blocks, h, c: dict, gen_in: dict, outs: dict, model: dict):
    """On load, a link's settings go to the controls and run once (the run's dependency is returned: History and the
    inspected cell follow it); 'Copy link' writes the controls' link."""
    controls = {n: c[n] for n in GEN_INPUTS}
    loaded = wire(demo.load, loader(h.catalogue.models), {}, controls, request=True,   # queued: its toast shows
                  api_visibility="private", show_progress="hidden")
    linked = wire(loaded.success, h.generate, gen_in, outs, request=True, api_visibility="private", **model)
    wire(c["copy_link"].click, copy, controls, {"link": c["link"]}, queue=False,
         api_visibility="private").then(None, [c["link"]], [c["link"]], js=COPY_JS, queue=False)
    return linked
