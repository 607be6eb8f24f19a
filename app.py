"""specviz app: layout and wiring only (logic: specviz/app/, one handler per event in handlers.py; pictures:
specviz/render/).

    python app.py [--model scenes] [--device auto] [--host 127.0.0.1] [--port 7860] [--share] [--allow-paths]
"""
from __future__ import annotations

from specviz.core import heap  # isort: skip
if __name__ == "__main__":      # served (python app.py): before torch and gradio fill the C heap, so that its
    heap.map_big_blocks()       # memory stays flat run after run (specviz/core/heap.py; importers keep theirs)
import argparse
import os
from dataclasses import asdict, replace

import gradio as gr
import torch

from specviz.analysis import front, views
from specviz.app import (
    atlas_tab,
    configs,
    follow,
    history_tab,
    link,
    pinned,
    present,
    replay_fit,
    replay_tab,
    serving,
    sweep_tab,
)
from specviz.app import widgets as w
from specviz.app.catalogue import Catalogue, default_catalogue
from specviz.app.clicks import JS as CLICKS_JS
from specviz.app.commit import JS as COMMIT_JS
from specviz.app.edge import wire
from specviz.app.handlers import GEN_INPUTS, GEN_OUTPUTS, PREVIEWED, Handlers, slot_visibility
from specviz.app.keys import KEYS_CSS, KEYS_JS
from specviz.app.stream import API_FPS
from specviz.engine.config import RunConfig
from specviz.engine.registry import METHODS, get, ui_knobs
from specviz.models import ALLOWED_HUB, converted_models, use_compile
from specviz.render import html, primer

# the default comparison, chosen from the bench on scenes (docs/methods_lossless.md): the baseline, classic lossless
# SJD, the best lossless successor (MC-SJD: same drafts, coupled; +56 % step compression on scenes v2, README
# bench) and relaxation (CSD)
DEFAULT_METHODS = ["ar", "sjd", "mcsjd", "csd"]
EXAMPLES = ["a red house on the left, a sunset sky over snow", "a yellow sun in the centre, a clear day sky over sand",
            "a green tree on the right, an overcast sky over grass", "a purple mountain, a starry night sky over water"]
INTRO = ("## specviz — speculative decoding, made visible\n"
         "Same prompt and seed for every method; one shared clock of **target forwards** (each tick, every method "
         "still running makes one forward), so the fastest finishes first. Hatched cells are undecided. "
         "Click any cell of an image or map to inspect it. What am I looking at? The *Primer* tab walks through one "
         "step of your run.")
PRESENT_JS = present.js(ui_knobs("setup") + ui_knobs("main"))      # the controls' short names: Present mode's labels
STYLE = dict(theme=gr.themes.Soft(), css=html.CSS + present.CSS + pinned.CSS + atlas_tab.CSS + history_tab.CSS
             + replay_fit.CSS + KEYS_CSS + serving.WAIT_CSS, js=f"() => {{ ({PRESENT_JS})(); ({pinned.JS})(); "
             f"({replay_fit.JS})(); ({CLICKS_JS})(); ({COMMIT_JS})(); ({KEYS_JS})(); ({serving.WAIT_JS})(); }}")
# show_error: Gradio's own refusals (a path that was never uploaded, too few inputs) reach API clients as their one-line
# message instead of "the app raised an exception"; every handler error is already one line (errors.friendly)
# state_session_capacity: one session's finished run holds ~2 MB with all seven scenes traces (~7 MB on Janus-Pro);
# API clients never close a tab, so the oldest sessions beyond 500 are dropped (and any state after 2 h idle)
SERVE = dict(show_error=True, max_file_size="20mb", state_session_capacity=500)
STATE_TTL_S = 2 * 3600
D = RunConfig()


def _controls(catalogue: Catalogue, c: dict) -> None:
    c["prompt"] = w.Textbox(D.prompt, label="Prompt", lines=2, elem_id="prompt")
    with gr.Row():
        c["go"] = gr.Button("Generate", variant="primary", elem_id="generate")
        c["stop"] = gr.Button("Stop", variant="stop", elem_id="stop")
    gr.Examples([[e] for e in EXAMPLES], [c["prompt"]], label="Example prompts", elem_id="examples")
    with gr.Row(elem_id="seed_model"):
        c["seed"] = w.Number(D.seed, label="Seed", precision=0, minimum=0, elem_id="seed")
        c["model"] = w.Dropdown(list(catalogue.models), value=catalogue.models[0], label="Model",
                                 allow_custom_value=catalogue.allow_paths, elem_id="model")
    c["methods"] = w.CheckboxGroup([(get(m).label, m) for m in METHODS], value=DEFAULT_METHODS,
                                    label="Methods to compare", info=configs.families_line(), elem_id="methods")
    w.Markdown("Moving a slider previews the recorded drafts; releasing it re-runs the methods.",
                elem_classes="sv-sub")
    for k in ui_knobs("setup") + ui_knobs("main"):
        c[k.name] = w.knob_control(k, getattr(D, k.name))
    with gr.Accordion("Sampling and drafting", open=False, elem_id="setup"):
        for k in ui_knobs("advanced"):
            c[k.name] = (_drafters(catalogue, k) if k.name == "draft_model"
                         else w.knob_control(k, getattr(D, k.name)))


def _drafters(catalogue: Catalogue, k):
    """The Drafter control: the model's own drafter (the EAGLE head shipped with scenes) or an offered draft model."""
    return w.Dropdown([("model's own (scenes: EAGLE head)", ""), *catalogue.drafters], value="", label=k.label,
                      info=f"tree methods ({', '.join(configs.tree_methods())}) propose with this drafter; on a "
                           "model without its own, the one draft model offered here is the default",
                      allow_custom_value=catalogue.allow_paths, elem_id=k.name)


def _race_row(c: dict) -> list:
    cols = []
    with gr.Row(elem_id="lanes"):
        for m in METHODS:
            with gr.Column(visible=m in DEFAULT_METHODS, min_width=150, elem_id=f"lane_{m}") as col:
                w.HTML(present.lane_title(get(m).label), elem_id=f"title_{m}")
                c[f"img_{m}"] = w.Image(label=get(m).label, show_label=False, format="png", type="pil",
                                         interactive=False, buttons=["download", "fullscreen"], elem_id=f"img_{m}")
                c[f"stats_{m}"] = w.HTML(elem_id=f"stats_{m}")
            cols.append(col)
    return cols


def _tabs(c: dict) -> None:
    with gr.Tabs(elem_id="tabs", overflow_behavior="wrap") as c["tabs"]:
        with gr.Tab("Heatmaps", id="maps", elem_id="tab_maps"):
            c["map_kind"] = gr.State("entropy")                      # the map on screen: a run refreshes it most
            with gr.Tabs(overflow_behavior="wrap"):
                for spec in views.MAPS.values():                     # one sub-tab and image per map record
                    with gr.Tab(spec.title, elem_id=spec.tab_id) as c[spec.tab_id]:
                        c[spec.output] = w.Image(format="png", type="pil", interactive=False, show_label=False,
                                                 buttons=["download", "fullscreen"], elem_id=spec.output)
            c["opacity"] = w.Slider(0, 1, 1.0, step=0.05, label="Overlay: map opacity over the image",
                                     elem_id="opacity")
        with gr.Tab("Primer", id="primer", elem_id="tab_primer"):
            c["primer"] = w.HTML(primer.primer_html(None), elem_id="primer")
        with gr.Tab("Live preview", id="preview", elem_id="tab_preview"):
            c["preview_table"] = w.HTML(f"<i>Move {html.either([k.sym for k in ui_knobs('main')])} after a run.</i>",
                                        elem_id="preview_table")
            c["preview_image"] = w.Image(format="png", type="pil", interactive=False, show_label=False,
                                          elem_id="preview_image")
        with gr.Tab("Replay", id="replay", elem_id="tab_replay"):
            replay_tab.layout(c)
        with gr.Tab("Summary", id="summary", elem_id="tab_summary"):
            c["summary"] = w.Dataframe(headers=html.SUMMARY_HEADERS, interactive=False, wrap=True, elem_id="summary")
            w.Markdown("*time s* is the method's own compute; the race interleaves the methods on one clock.")
            c["hist"] = w.Image(label="Accepted length", format="png", type="pil", interactive=False,
                                show_label=False, elem_id="hist")
        with gr.Tab("History", id="history", elem_id="tab_history"):
            history_tab.layout(c)
        with gr.Tab("Sweep", id="sweep", elem_id="tab_sweep"):
            w.Markdown("A small grid over one rule parameter on the embedded model (same captions and seed for "
                        "every point; AR and lossless SJD as references): step compression against a quality cost "
                        "that moves with relaxation, the Pareto front as a red line where neighbouring points "
                        "differ by more than their standard errors. A measure that does not move "
                        "is stated in the plot's title instead.")
            with gr.Row():
                c["sw_method"] = w.Radio(list(sweep_tab.params()), value="csd", label="Method", elem_id="sw_method")
                c["sw_param"] = w.Dropdown(list(sweep_tab.params()["csd"]), value="lam", label="Parameter",
                                            elem_id="sw_param")
                c["sw_values"] = w.Textbox("0.5,1,2,4", label="Values (comma-separated)", elem_id="sw_values")
                c["sw_prompts"] = w.Slider(2, sweep_tab.MAX_PROMPTS, 4, step=1, label="Captions",
                                            elem_id="sw_prompts")
                c["sw_measure"] = w.Dropdown([(v.split(" (")[0], k) for k, v in front.MEASURES.items()],
                                             value="implausible", label="Quality cost (y)", elem_id="sw_measure")
                c["sw_noise"] = w.Radio(list(sweep_tab.NOISE.choices), value=D.noise, label=sweep_tab.NOISE_LABEL,
                                         info=sweep_tab.NOISE_INFO, elem_id="sw_noise")   # the race's, mirrored
            c["sw_go"] = gr.Button("Run sweep", elem_id="sw_go")
            c["sw_plot"] = w.Plot(label="Pareto", show_label=False, elem_id="sw_plot")   # its title says it
            w.Markdown("Click a row to open that point in the race: its method and knob values go to the controls "
                        "and the race runs with this page's prompt and seed (the History tab marks it *sweep*).",
                        elem_classes="sv-sub")
            c["sw_table"] = w.Dataframe(headers=sweep_tab.COLUMNS, interactive=False, elem_id="sw_table")
            c["sw_points"] = gr.State([])                    # (method, point) per table row
        with gr.Tab("Atlas", id="atlas", elem_id="tab_atlas"):
            atlas_tab.layout(c)
        with gr.Tab("Export / open", id="export", elem_id="tab_export"):
            c["export"] = gr.Button("Export all (zip): images, maps, traces, slide, race video", elem_id="export")
            c["files"] = gr.File(label="Downloads", file_count="multiple", interactive=False, elem_id="files")
            w.Markdown("Open trace JSON files (from Export above or `specviz generate --trace`) to see their maps, "
                        "summary and replay again; images are decoded when their model is offered here.")
            c["open_files"] = w.File(label="Trace JSON files", file_count="multiple", file_types=[".json"],
                                      elem_id="open_files")
            c["open"] = gr.Button("Open traces", elem_id="open")
            link.layout(c)
    c["inspector"] = w.HTML("<i>Token inspector: click a cell of any image or map.</i>", elem_id="inspector")


def _wire(h: Handlers, c: dict, cols: list, demo: gr.Blocks) -> None:
    def pick(*names) -> dict:
        return {n: c[n] for n in names}
    gen_in = pick(*GEN_INPUTS, "opacity", "map_kind", "focus") | {"present": c["present_on"]}
    for k, spec in views.MAPS.items():
        c[spec.tab_id].select(lambda _k=k: _k, None, c["map_kind"], queue=False, api_visibility="private")
    outs = pick(*GEN_OUTPUTS)
    model = dict(concurrency_id="model", concurrency_limit=1, show_progress="minimal", show_progress_on=[c["status"]])
    runs = [wire(c["go"].click, h.generate, gen_in, outs, _api_defaults(), request=True, api_name="generate",
                 **model),                                             # request: API callers get the lean stream
            wire(c["prompt"].submit, h.generate, gen_in, outs, request=True, api_visibility="private", **model)]
    quick = dict(concurrency_id="preview", concurrency_limit=4, show_progress="hidden", api_visibility="private")
    for name in PREVIEWED:
        wire(c[name].input, h.preview, pick("state", *PREVIEWED, "opacity"),
             pick("preview_image", "preview_table", "tabs"), trigger_mode="always_last", **quick)
        runs.append(wire(c[name].release, h.rerun, gen_in | pick("state"), outs, request=True,
                         api_visibility="private", trigger_mode="always_last", **model))
    c["present"].change(None, [c["present"]], None, js=present.TOGGLE, api_visibility="private")
    c["stop"].click(lambda: html.STOPPED, None, [c["status"]], cancels=runs, queue=False, api_visibility="private")
    maps = pick(*views.map_outputs(), "present_on")
    wire(c["opacity"].change, h.maps, pick("state", "opacity", "focus") | {"present": c["present_on"]}, maps, **quick)
    wire(c["present"].change, h.maps, pick("state", "opacity", "focus", "present"), maps, **quick)
    inspected = [c["inspector"], c["focus"]]                        # a click sets the fragment and the cell
    clicks = [c[f"img_{m}"].select(h.inspect_slot(m), [c["state"]], inspected, **follow.CLICK) for m in METHODS]
    for k in (*views.MAPS, None):
        img = c[views.MAPS[k].output] if k else c["preview_image"]
        clicks.append(img.select(h.inspect_map(k), [c["state"], c["focus"], c["present_on"]], inspected,
                                 **follow.CLICK))
    clicks.append(replay_tab.wire(h.replay, c))                     # a click on the replay inspects a lane's cell
    opened = wire(c["open"].click, h.open_traces, {"files": c["open_files"], "opacity": c["opacity"],
                                                   "focus": c["focus"], "present": c["present_on"]},
                  outs | pick("methods"), request=True, api_name="open_traces", **model)
    wire(c["export"].click, h.export, pick("state"), pick("files"), concurrency_id="export", api_visibility="private")
    sweep_tab.wire(h, c)
    opening = {"points": c["sw_points"], "methods": c["methods"]} | pick(*sweep_tab.OPENED)
    chosen = wire(c["sw_table"].select, sweep_tab.picked, opening, pick("methods", *sweep_tab.OPENED), select=True,
                  queue=False, api_visibility="private")
    swept = wire(chosen.success, h.generate, gen_in, outs, request=True, api_visibility="private", **model)
    linked = link.wire_link(demo, h, c, gen_in, outs, model)       # a link's settings run once on load
    history_tab.wire(c, {"generate": [*runs[:2], linked], "rerun": runs[2:], "opened": [opened], "sweep": [swept]},
                     h.export_root)
    follow.wire(c, [*runs, opened, swept, linked], clicks)
    c["methods"].change(slot_visibility, [c["methods"]], cols, queue=False, api_visibility="private")
    atlas_tab.wire(h, c)


def _api_defaults() -> dict:
    """/generate's defaults: the app's own starting values (every knob by its RunConfig name)."""
    return asdict(D) | {"methods": DEFAULT_METHODS, "opacity": 1.0}    # every knob, quiet ones too


def build_demo(catalogue: Catalogue | None = None, fps: float = 8.0, export_root: str | None = None,
               api_fps: float = API_FPS) -> gr.Blocks:
    """The whole app. `catalogue` injects the models offered (tests pass tiny ones); default: assets + local HF cache.
    `fps`: race frames a second streamed to a page; `api_fps`: to gradio_client callers (app/stream.py)."""
    h = Handlers(catalogue or default_catalogue(), export_root, fps, api_fps)
    c: dict = {}
    with gr.Blocks(title="specviz", fill_width=True, delete_cache=serving.cache_rule()) as demo:
        c["state"] = gr.State(None, time_to_live=STATE_TTL_S)
        c["focus"] = gr.State(None)                     # the inspected cell (follow.Cell): runs ring it, follow.py
        c["present_on"] = gr.State(False)               # Present mode: the maps draw the inspected lane (follow.py)
        w.Markdown(INTRO, elem_id="intro")
        with gr.Row():
            with gr.Column(scale=1, min_width=300, elem_id="controls"):
                _controls(h.catalogue, c)
            with gr.Column(scale=4, elem_id="main"):
                with gr.Row():
                    c["status"] = w.HTML(elem_id="status")
                    c["present"] = gr.Checkbox(False, label="Present mode (key p)", elem_id="present",
                                               container=False, scale=0, min_width=260)
                cols = _race_row(c)
                _tabs(c)
        _wire(h, c, cols, demo)
    h.demo = demo                           # runs drop their session's component copies (serving.drop_copies)
    w.safe_pruning(demo)                    # Gradio's cache sweep must survive files added while it runs
    return demo


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description="specviz: speculative decoding of image generators, made visible")
    p.add_argument("--model", default="scenes", help=f"model to preload (scenes, {', '.join(ALLOWED_HUB)} or a "
                                                     "converted checkpoint under $SPECVIZ_MODELS)")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda")
    # Hugging Face Spaces (and Docker setups) say where to listen through Gradio's own variables; an explicit
    # server_name would override them, so they are the defaults here
    p.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    p.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860")))
    p.add_argument("--share", action="store_true", help="create a public gradio.live link")
    p.add_argument("--allow-paths", action="store_true", help="also accept local checkpoint directories as models")
    p.add_argument("--draft-model", action="append", default=[], metavar="ID|PATH",
                   help="offer this draft model for the tree methods (repeatable; same allow-list and path rules "
                        "as --model)")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0 = torch default)")
    p.add_argument("--compile", action="store_true", help="torch.compile the models' verification forwards")
    args = p.parse_args(argv)
    try:
        use_compile(args.compile)                                 # one line where torch.compile cannot compile
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    if args.threads:
        torch.set_num_threads(args.threads)
    for flag, name in [("--model", args.model)] + [("--draft-model", d) for d in args.draft_model]:
        if name not in ("scenes", *ALLOWED_HUB, *converted_models()) and not args.allow_paths:
            raise SystemExit(f"error: {flag} {name} is not allow-listed (scenes, {', '.join(ALLOWED_HUB)}); "
                             "pass --allow-paths to serve a local checkpoint directory")
    catalogue = default_catalogue(args.device, args.allow_paths, tuple(args.draft_model))
    models = (args.model, *(m for m in catalogue.models if m != args.model))      # the preloaded model first
    catalogue = replace(catalogue, models=models)
    try:
        catalogue.load(args.model)                                  # load once, before the first visitor waits
    except (FileNotFoundError, ValueError) as e:
        raise SystemExit(f"error: {e}") from None
    demo = build_demo(catalogue)
    serving.trace_memory_if_asked()                               # SPECVIZ_TRACEMALLOC=1 (scripts/soak.py)
    serving.quiet_when_idle(demo.queue(default_concurrency_limit=1)).launch(  # idle CPU: see specviz/app/serving.py
        server_name=args.host, server_port=args.port, share=args.share, **STYLE, **SERVE)


if __name__ == "__main__":
    main()
