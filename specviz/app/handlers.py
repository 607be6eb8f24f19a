"""Gradio handlers: thin glue from UI values to session / panels / preview / html, and back to component updates.

Handlers return dicts keyed by output *names*; app.py binds names to components in GEN_OUTPUTS order. Per-session data
lives in a RunState held by gr.State; nothing shared is mutated per request. Every error reaches the UI as one
gr.Error line (the traceback goes to the server log only).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import gradio as gr

from specviz.analysis import paired
from specviz.analysis.cards import cards
from specviz.analysis.preview import outcomes, rescore
from specviz.analysis.views import MAPS, by_output, map_outputs
from specviz.app import sweep_tab
from specviz.app.catalogue import Catalogue
from specviz.app.configs import resolve
from specviz.app.errors import friendly
from specviz.app.follow import Cell, inspecting, lane_pictures, map_lane, marked
from specviz.app.gpu import BASE_S, MAX_S, on_gpu, run_seconds
from specviz.app.opening import read_traces
from specviz.app.race import race
from specviz.app.replay_tab import Replay
from specviz.app.serving import drop_copies
from specviz.app.stream import API_FPS, API_PICTURES_EVERY_S, is_api_call, only_changed, trimmed_heap
from specviz.core.cards import Cards
from specviz.engine.registry import METHODS, KnobValues, Recomputed, ui_knobs
from specviz.render import draw, html, knob_text, panels
from specviz.render.exports import export_run
from specviz.render.figures import histogram_image
from specviz.render.lane_view import LaneView

# the /generate inputs: the run's identity, then every knob the registry shows as a control (methods.ui_knobs)
GEN_INPUTS = Recomputed(lambda: ("prompt", "seed", "model", "methods", *(k.name for k in ui_knobs())))
PREVIEWED = Recomputed(lambda: tuple(k.name for k in ui_knobs("main")))     # the sliders the instant preview moves
GEN_OUTPUTS = Recomputed(lambda: (*(f"img_{m}" for m in METHODS), *(f"stats_{m}" for m in METHODS),
                            *map_outputs(), "summary", "hist", "status", "state",
                            "replay_method", "replay_step", "replay_image", "replay_caption", "preview_image",
                            "preview_table", "replay_tree", "replay_tree_legend"))
# heatmaps during a run: the map on screen from the first update and every SHOWN_MAP_EVERY_S, all of them every
# MAPS_EVERY_S and whenever a lane finishes (so a finished lane's maps are complete in the update that shows its final
# image). Cost, scenes, four
# methods, 2026-12-02: drawing all six 32 ms, Gradio's PNG encoding of them ~110 ms; one map ~5 + ~20 ms
MAPS_EVERY_S, SHOWN_MAP_EVERY_S = 2.0, 0.5


@dataclass
class RunState:
    """One browser session's finished comparison."""
    model: str = ""
    prompt: str = ""
    traces: dict = field(default_factory=dict)      # method -> Trace
    images: dict = field(default_factory=dict)      # method -> (h, w, 3) uint8
    cards: Cards = field(default_factory=cards)      # the methods' cards, built once for the run (render reads them)


class Handlers:
    def __init__(self, catalogue: Catalogue, export_root: str | None = None, fps: float = 8.0,
                 api_fps: float = API_FPS):
        self.catalogue, self.export_root, self.fps, self.api_fps = catalogue, export_root, fps, api_fps
        self.maps_every = {"all": MAPS_EVERY_S, "shown": SHOWN_MAP_EVERY_S}
        self.replay = Replay(catalogue)
        self.demo = None            # build_demo sets it: each run drops its session's component copies (serving)

    # Every handler takes its inputs as one dict keyed by name and returns (or yields) updates keyed by output name
    # (GEN_OUTPUTS, ...); app/edge.py wires the names to components. The exceptions are POSITIONAL (below), each
    # for a value Gradio hands only to a positional parameter.
    # ------------------------------------------------------------------------------------------------ generate
    @on_gpu(run_seconds)
    def generate(self, inputs: dict):
        """Stream the race: {GEN_INPUTS..., opacity[, map_kind, focus, request]} -> updates by GEN_OUTPUTS name (lean
        for API callers: app/stream.py; map_kind: the heatmap tab on screen, refreshed most often; focus: the
        inspected cell (follow.Cell), which the final pictures ring)."""
        lean = is_api_call(inputs.get("request"))
        drop_copies(self.demo, inputs.get("request"))
        yield from self._race({k: inputs[k] for k in GEN_INPUTS}, float(inputs["opacity"]), lean,
                              inputs.get("map_kind") or "entropy", inputs.get("focus"), bool(inputs.get("present")))

    def rerun(self, inputs: dict):
        """Slider released: re-run only on the embedded (fast) models; elsewhere the preview must do. {GEN_INPUTS...,
        opacity, state}: the finished run shows the preview's prediction for it beside what it achieved."""
        if inputs["model"] not in self.catalogue.reruns:
            yield {}
            return
        before = inputs.get("state")
        for upd in self.generate(inputs):
            if isinstance(upd.get("state"), RunState) and before and before.traces:
                rows = outcomes(before.traces, upd["state"].traces, PREVIEWED)
                upd["preview_table"] = html.outcome_table(rows)
                # beside the knobs
                upd["status"] = upd.get("status", "") + knob_text.outcome_line(rows, upd["state"].cards)
            yield upd

    @friendly
    def _race(self, knobs: dict, opacity: float, lean: bool = False, kind: str = "entropy", focus=None,
              present: bool = False):
        model, factory, cfgs = resolve(self.catalogue, knobs)
        with trimmed_heap():
            yield from self._stream(cfgs[0].model, cfgs, model, factory, opacity, lean, kind, focus, present)

    def _stream(self, name, cfgs, model, factory, opacity, lean, kind, focus, present=False):
        t0, finished, pictures_at, sent = time.perf_counter(), set(), time.perf_counter(), {}
        cs = cards()                                                      # the run's cards, once
        maps_at, kind_at = t0, -1e9     # the first frame draws the map on screen only (the rest: one prefill token)
        shown = self._blank()
        for fr in race(model, factory, cfgs, fps=self.api_fps if lean else self.fps):
            fresh = [v for v in fr.lanes if v.method not in finished]
            finishing = any(v.done for v in fresh)
            finished |= {v.method for v in fresh if v.done}
            if not lean or fr.done or time.perf_counter() - pictures_at >= API_PICTURES_EVERY_S:
                shown |= {f"img_{v.method}": v.image for v in fresh}
                pictures_at = time.perf_counter()
            # the last frame restates every lane: its word on AR's image exists only once every lane is done
            shown |= {f"stats_{v.method}": html.lane_stats(v, cs) for v in (fr.lanes if fr.done else fresh)}
            shown["status"] = html.status(fr.tick, fr.lanes, fr.done, time.perf_counter() - t0, fr.memory)
            st = RunState(name, cfgs[0].prompt, fr.traces, fr.images, cs)
            if fr.done:                                                   # the result carries every picture
                shown |= self._finish(st, opacity, focus, present)
            elif not lean:                                                # the maps fill in as the run goes
                now, only = time.perf_counter(), map_lane(st, focus, present)
                if finishing or now - maps_at >= self.maps_every["all"]:
                    shown |= self._maps(st, opacity, None, only)
                    maps_at = kind_at = now
                elif kind in MAPS and now - kind_at >= self.maps_every["shown"]:
                    shown[MAPS[kind].output] = panels.heatmap(kind, fr.traces, fr.images, opacity, None, only,
                                                              cards=cs)
                    kind_at = now
            yield only_changed(shown, sent) if lean and not fr.done else dict(shown)

    @staticmethod
    def _blank() -> dict:
        """What a run shows before it has its own: no picture in the unused lanes, the finished-run views cleared.
        Every update of a run sends every output's current value (unchanged ones cost nothing on the wire: Gradio
        streams diffs), because an output left out or skipped is far dearer: Gradio rebuilds its component and its
        config for each one (~1.1 ms per output per update against ~0.1 ms for an unchanged text and ~0.8 ms for an
        unchanged picture; measured 2026-12-01, Gradio 6.31). Only the state and the replay controls wait for the
        final update (a skipped picture output left one component copy per call: replay_tree, scripts/soak.py). API
        callers get the lean stream instead (only_changed): for them a picture sent unchanged is one
        more file to fetch, and it gets None (a skipped picture also leaves a component copy in the session for good:
        docs/gradio.md)."""
        upd = {f"img_{m}": None for m in METHODS} | {f"stats_{m}": "" for m in METHODS}
        upd |= {n: None for n in map_outputs()}          # until drawn (the first frame: the map on screen only)
        return upd | {"summary": [], "hist": None, "replay_image": None, "replay_caption": html.REPLAY_PENDING,
                      "replay_tree": None, "replay_tree_legend": "", "preview_image": None, "preview_table": ""}

    @on_gpu(BASE_S)
    @friendly
    def open_traces(self, inputs: dict):
        """Open trace JSON files {files, opacity[, focus, present]} (Export / CLI output, or anyone's): maps,
        summary, replay and preview, as after a run; images when the trace's model is offered here. -> GEN_OUTPUTS +
        methods."""
        files, opacity = inputs["files"], inputs["opacity"]
        drop_copies(self.demo, inputs.get("request"))
        traces, images, note = read_traces(self.catalogue, [_path(f) for f in (files or [])])
        first = next(iter(traces.values()))
        prompt = first.config.get("prompt", "")
        upd = {f"stats_{m}": "" for m in METHODS}
        counts, st = paired.against_ar(traces), RunState(first.model, prompt, traces, images)
        for m, t in traces.items():
            n = t.grid[0] * t.grid[1]
            upd[f"stats_{m}"] = html.lane_stats(LaneView(m, None, len(t.steps), len(t.committing()), n, True,
                                                         t.summary["seconds"], config=t.config, vs_ar=counts.get(m),
                                                         grid=tuple(t.grid)),
                                                st.cards)
        upd |= self._finish(st, float(opacity), inputs.get("focus"),
                            bool(inputs.get("present")))
        upd["status"] = html.opened(list(traces), prompt, note)
        return upd | {"methods": list(traces)}                   # a value: a component update leaves a copy

    def _finish(self, st: RunState, opacity: float, focus: Cell | None = None, present: bool = False) -> dict:
        """A finished run's views: every lane and map (the inspected cell `focus` ringed; Present mode: the maps of
        its lane), summary, replay."""
        mark = marked(st, focus)
        upd = self._maps(st, opacity, mark, map_lane(st, focus, present)) | lane_pictures(st, mark)
        upd |= {"state": st, "summary": html.summary_rows(st.traces), "hist": histogram_image(st.traces, st.cards)}
        upd |= self.replay.start(st)                                        # the Replay tab (app/replay_tab.py)
        upd |= {"preview_image": panels.preview_map([], {}, {}), "preview_table": ""}
        return upd

    def _maps(self, st: RunState, opacity: float, mark: int | None = None, only: str | None = None) -> dict:
        return by_output(panels.heatmaps(st.traces, st.images, opacity, mark, only, cards=st.cards))

    # ------------------------------------------------------------------------------------------------ cheap views
    @friendly
    def maps(self, inputs: dict):
        """The map opacity moved or Present mode was toggled: {state, opacity, focus, present} -> the maps (the
        inspected cell stays ringed; Present mode: its lane's) and the mode's state."""
        st, cell, present = inputs["state"] or RunState(), inputs.get("focus"), bool(inputs.get("present"))
        return self._maps(st, float(inputs["opacity"]), marked(st, cell), map_lane(st, cell, present)) | {
            "present_on": present}

    @friendly
    def preview(self, inputs: dict):
        """Re-score the recorded drafts under the slider values (no model call): {state, PREVIEWED..., opacity}."""
        st = inputs["state"]
        if not st or not st.traces:
            return {"preview_image": panels.preview_map([], {}, {}),
                    "preview_table": "<i>Generate first; then the sliders preview here.</i>"}
        moved = {name: float(inputs[name]) for name in PREVIEWED}
        first = next(iter(st.traces.values()))
        knobs = KnobValues.from_config(first.config, **moved)
        pv = [rescore(t, KnobValues.from_config(t.config, **moved)) for t in st.traces.values()]
        return {"preview_image": panels.preview_map(pv, st.traces, st.images, float(inputs["opacity"])),
                "preview_table": html.preview_table(pv, knobs, st.cards), "tabs": gr.Tabs(selected="preview")}

    def inspect_slot(self, method: str):
        """A click on `method`'s lane picture -> (inspector, focus)."""
        @friendly
        def fn(st: RunState, evt: gr.SelectData):
            if not st or method not in st.traces:
                return "<i>Finish a run with this method, then click a cell.</i>", None
            t = st.traces[method]
            c = max(1, draw.cell_px(t.grid))
            x, y = evt.index
            pos = _clamp(int(y) // c, t.grid[0]) * t.grid[1] + _clamp(int(x) // c, t.grid[1])
            return inspecting(t, pos, st.cards)
        return fn

    def inspect_map(self, kind: str | None = None):
        """A click on a map composite (`kind` a key of views.MAPS; None: the preview map, one panel per method), as
        drawn for the inspected cell `focus` and Present mode `present` (follow.map_lane) -> (inspector, focus)."""
        @friendly
        def fn(st: RunState, focus: Cell | None, present: bool, evt: gr.SelectData):
            if not st or not st.traces:
                return "<i>Generate first, then click a cell of any map.</i>", None
            only = map_lane(st, focus, present)
            shown, px = (panels.map_layout(kind, st.traces, only, cards=st.cards) if kind
                         else (list(st.traces), draw.PANEL))
            first = st.traces[shown[0]]
            hit = draw.locate(len(shown), evt.index[0], evt.index[1], first.grid, px)
            if hit is None:
                return "<i>Click inside one of the maps.</i>", None
            return inspecting(st.traces[shown[hit[0]]], hit[1], st.cards)
        return fn

    @friendly
    def export(self, inputs: dict):
        """{state} -> {files: the run's exported paths}."""
        st = inputs["state"]
        if not st or not st.traces:
            raise gr.Error("Nothing to export yet: generate first.")
        with trimmed_heap():
            return {"files": [str(p) for p in export_run(st.traces, st.images, st.prompt, self.export_root,
                                                         cards=st.cards)]}

    @on_gpu(MAX_S)
    def sweep(self, method: str, param: str, values: str, prompts, measure: str = "implausible", noise: str = "",
              progress=gr.Progress()):  # noqa: B008 (Gradio API)
        """The Sweep tab's Run (sweep_tab.handler, under the page's noise) inside a GPU lease where there is one."""
        return sweep_tab.handler(self.export_root)(method, param, values, prompts, measure, noise, progress=progress)


# the handlers Gradio calls positionally, and why: a click's gr.SelectData and a sweep's gr.Progress reach only
# positional parameters with those type hints (docs/architecture.md; tests/app/test_handler_convention.py)
POSITIONAL = {"inspect_slot": "a click's gr.SelectData", "inspect_map": "a click's gr.SelectData",
              "sweep": "the sweep's gr.Progress"}


def slot_visibility(methods) -> list:
    return [gr.Column(visible=m in (methods or [])) for m in METHODS]


def _path(f) -> str:
    return f if isinstance(f, str) else getattr(f, "path", None) or getattr(f, "name", "")


def _clamp(v: int, n: int) -> int:
    return max(0, min(n - 1, v))
