"""Gradio handlers: thin glue from UI values to session / panels / preview / html, and back to component updates.

Handlers return dicts keyed by output *names*; app.py binds names to components in GEN_OUTPUTS order. Per-session data
lives in a RunState held by gr.State; nothing shared is mutated per request. Every error reaches the UI as one
gr.Error line (the traceback goes to the server log only).
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import inspect
import logging
import time
from dataclasses import dataclass, field

import gradio as gr
import numpy as np
import torch
from PIL import Image

from specviz import html, panels, render
from specviz.config import METHODS, ConfigError
from specviz.exports import export_run
from specviz.figures import histogram_image
from specviz.methods import Live, knob, ui_knobs
from specviz.preview import Knobs, rescore
from specviz.session import (
    RACE_PX,
    Backend,
    LaneView,
    check_draft,
    check_model,
    default_draft,
    load,
    make_configs,
    race,
    read_traces,
)

log = logging.getLogger("specviz.app")
# the /generate inputs: the run's identity, then every knob the registry shows as a control (methods.ui_knobs)
KNOBS = Live(lambda: ("prompt", "seed", "model", "methods", *(k.name for k in ui_knobs())))
PREVIEWED = Live(lambda: tuple(k.name for k in ui_knobs("main")))     # the sliders the instant preview moves
GEN_OUTPUTS = Live(lambda: (*(f"img_{m}" for m in METHODS), *(f"stats_{m}" for m in METHODS),
                            *(f"map_{k}" for k in panels.KINDS), "summary", "hist", "status", "state",
                            "replay_method", "replay_step", "replay_image", "replay_caption", "preview_image",
                            "preview_table"))
PREVIEW_OUTPUTS = ("preview_image", "preview_table")
MAPS_EVERY_S = 2.0          # heatmaps during a run: at most this often (one update of all six: ~0.15 s)
# API callers (gradio_client, which marks its requests `x-gradio-user: api`) fetch every picture of every streamed
# update as a file, at ~70 ms of client CPU each here (a fresh httpx client and TLS context per file): a browser-rate
# stream of a four-method run made ~1,000 fetches and took 115 s instead of 8 s. They get a lean stream instead
# (Handlers._race, lean): API_FPS updates a second, the race pictures at most every API_PICTURES_EVERY_S, the maps
# only with the final update, which always carries every output (it is the call's result).
API_FPS = 2.0
API_PICTURES_EVERY_S = 2.0
OOM_MESSAGE = ("Out of memory during this run; its memory has been released. Try fewer methods, a shorter window or "
               "tree, or a smaller model (the app is ready for the next run).")


@dataclass
class RunState:
    """One browser session's finished comparison."""
    model: str = ""
    prompt: str = ""
    traces: dict = field(default_factory=dict)      # method -> Trace
    images: dict = field(default_factory=dict)      # method -> (h, w, 3) uint8


def friendly(fn):
    """Turn any exception into one clear gr.Error line; works for plain and generator handlers. The error is raised
    outside the `except` block so that it carries no traceback of the failed run: the run's frames (models' caches,
    partial traces) are freed at once, and after an out-of-memory the garbage is collected before the message."""
    def explain(e: Exception) -> gr.Error:
        if isinstance(e, gr.Error):
            return gr.Error(e.message, duration=e.duration)
        if isinstance(e, (ConfigError, ValueError, FileNotFoundError)):
            return gr.Error(str(e).removeprefix("--"))          # CLI flag names read as plain knob names here
        if _out_of_memory(e):
            log.warning("handler %s ran out of memory: %s", fn.__name__, str(e))   # str: keep no frames alive
            return gr.Error(OOM_MESSAGE)
        log.exception("handler %s failed", fn.__name__)
        return gr.Error(f"Unexpected error ({type(e).__name__}): {e}")

    def fail(err: gr.Error):
        if err.message == OOM_MESSAGE:
            release_memory()
        raise err

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen(*a, **k):
            try:
                yield from fn(*a, **k)
                return
            except Exception as e:                      # noqa: BLE001 - surfaced as one UI line
                err = explain(e)
            fail(err)
        return gen

    @functools.wraps(fn)
    def plain(*a, **k):
        try:
            return fn(*a, **k)
        except Exception as e:                          # noqa: BLE001
            err = explain(e)
        fail(err)
    return plain


def as_tuple(names, values: dict) -> tuple:
    return tuple(values.get(n, gr.skip()) for n in names)


class Handlers:
    def __init__(self, backend: Backend, export_root: str | None = None, fps: float = 8.0, api_fps: float = API_FPS):
        self.backend, self.export_root, self.fps, self.api_fps = backend, export_root, fps, api_fps

    # ------------------------------------------------------------------------------------------------ generate
    def generate(self, *args):
        """Stream the race: (KNOBS..., opacity[, gr.Request]) -> GEN_OUTPUTS tuples (lean for API callers)."""
        n = len(KNOBS)
        lean = is_api_call(args[n + 1] if len(args) > n + 1 else None)
        for upd in self._race(dict(zip(KNOBS, args[:n], strict=False)), float(args[n]), lean):
            yield as_tuple(GEN_OUTPUTS, upd)

    def rerun(self, *args):
        """Slider released: re-run only on the embedded (fast) models; elsewhere the preview must do."""
        model = args[KNOBS.index("model")]
        if model not in self.backend.live:
            yield as_tuple(GEN_OUTPUTS, {})
            return
        yield from self.generate(*args)

    @friendly
    def _race(self, knobs: dict, opacity: float, lean: bool = False):
        name = check_model(self.backend, knobs.pop("model") or "")
        methods = knobs.pop("methods")
        knobs["draft_model"] = default_draft(self.backend, name, check_draft(self.backend, knobs.get("draft_model",
                                                                                                       "")), methods)
        cfgs = make_configs(methods, model=name, **_typed(knobs))
        model, factory = load(self.backend, name, knobs["draft_model"])
        with trimmed_heap():
            yield from self._stream(name, cfgs, model, factory, opacity, lean)

    def _stream(self, name, cfgs, model, factory, opacity, lean):
        t0, finished, maps_at, pictures_at, sent = time.perf_counter(), set(), -1.0, time.perf_counter(), {}
        shown = self._blank()
        for fr in race(model, factory, cfgs, fps=self.api_fps if lean else self.fps):
            fresh = [v for v in fr.lanes if v.method not in finished]
            finished |= {v.method for v in fresh if v.done}
            if not lean or fr.done or time.perf_counter() - pictures_at >= API_PICTURES_EVERY_S:
                shown |= {f"img_{v.method}": v.image for v in fresh}
                pictures_at = time.perf_counter()
            shown |= {f"stats_{v.method}": html.lane_stats(v) for v in fresh}
            shown["status"] = html.status(fr.tick, fr.lanes, fr.done, time.perf_counter() - t0)
            if fr.done:
                shown |= self._finish(RunState(name, cfgs[0].prompt, fr.traces, fr.images), opacity)
                shown |= {f"img_{v.method}": v.image for v in fr.lanes}     # the result carries every picture
            elif not lean and time.perf_counter() - maps_at >= MAPS_EVERY_S:  # the maps fill in as the run goes
                shown |= self._maps(RunState(name, cfgs[0].prompt, fr.traces, fr.images), opacity)  # (no overlay)
                maps_at = time.perf_counter()
            yield only_changed(shown, sent) if lean and not fr.done else dict(shown)

    @staticmethod
    def _blank() -> dict:
        """What a run shows before it has its own: no picture in the unused lanes, the finished-run views cleared.
        Every update of a run sends every output's current value (unchanged ones cost nothing on the wire: Gradio
        streams diffs), because an output left out or skipped is far dearer: Gradio rebuilds its component and its
        config for each one (~1.1 ms per output per update against ~0.1 ms for an unchanged text and ~0.8 ms for an
        unchanged picture; measured 2026-12-01, Gradio 6.31). Only the state and the replay controls wait for the
        final update. API callers get the lean stream instead (only_changed): for them a picture sent unchanged is one
        more file to fetch, and it gets None (a skipped picture also leaves a component copy in the session for good:
        docs/gradio.md, issue 26)."""
        upd = {f"img_{m}": None for m in METHODS} | {f"stats_{m}": "" for m in METHODS}
        return upd | {"summary": [], "hist": None, "replay_image": None, "replay_caption": html.REPLAY_PENDING,
                      "preview_image": None, "preview_table": ""}

    @friendly
    def open_traces(self, files, opacity):
        """Open trace JSON files (Export / CLI output, or anyone's): maps, summary, replay and preview, as after a
        run; images when the trace's model is offered here. -> GEN_OUTPUTS + the methods checkbox."""
        traces, images, note = read_traces(self.backend, [_path(f) for f in (files or [])])
        first = next(iter(traces.values()))
        prompt = first.config.get("prompt", "")
        upd = {}
        for m, t in traces.items():
            n = t.grid[0] * t.grid[1]
            im = images.get(m)
            upd[f"img_{m}"] = (render.message(f"{m}: no image ({t.model} not decoded here)") if im is None else
                               panels.race_frame(Image.fromarray(im), np.ones(t.grid, bool), t.grid, RACE_PX))
            upd[f"stats_{m}"] = html.lane_stats(LaneView(m, None, len(t.steps), len(t.committing()), n, True,
                                                         t.summary["seconds"]))
        upd |= self._finish(RunState(first.model, prompt, traces, images), float(opacity))
        upd["status"] = html.opened(list(traces), prompt, note)
        return (*as_tuple(GEN_OUTPUTS, upd), gr.CheckboxGroup(value=list(traces)))

    def _finish(self, st: RunState, opacity: float) -> dict:
        first = next((m for m in st.traces if m != "ar"), next(iter(st.traces)))    # replay the first speculative run
        upd = self._maps(st, opacity)
        upd |= {"state": st, "summary": html.summary_rows(st.traces), "hist": histogram_image(st.traces),
                "replay_method": gr.Radio(choices=list(st.traces), value=first)}
        upd |= self._replay(st, first, 0, slider=True)
        upd |= {"preview_image": panels.preview_map([], {}, {}), "preview_table": ""}
        return upd

    def _maps(self, st: RunState, opacity: float) -> dict:
        return {f"map_{k}": panels.heatmap(k, st.traces, st.images, opacity) for k in panels.KINDS}

    # ------------------------------------------------------------------------------------------------ cheap views
    @friendly
    def maps(self, st: RunState, opacity: float):
        return as_tuple([f"map_{k}" for k in panels.KINDS], self._maps(st or RunState(), float(opacity)))

    @friendly
    def preview(self, st: RunState, *args):
        """Re-score the recorded drafts under the slider values (no model call): (state, PREVIEWED..., opacity)."""
        if not st or not st.traces:
            return panels.preview_map([], {}, {}), "<i>Generate first; then the sliders preview here.</i>", gr.skip()
        moved = {name: float(v) for name, v in zip(PREVIEWED, args[:-1], strict=True)}
        first = next(iter(st.traces.values()))
        knobs = Knobs.from_config(first.config, **moved)
        pv = [rescore(t, Knobs.from_config(t.config, **moved)) for t in st.traces.values()]
        return (panels.preview_map(pv, st.traces, st.images, float(args[-1])), html.preview_table(pv, knobs),
                gr.Tabs(selected="preview"))

    def inspect_slot(self, method: str):
        @friendly
        def fn(st: RunState, evt: gr.SelectData):
            if not st or method not in st.traces:
                return "<i>Finish a run with this method, then click a cell.</i>"
            t = st.traces[method]
            c = max(1, render.cell_px(t.grid))
            x, y = evt.index
            return html.inspector(t, _clamp(int(y) // c, t.grid[0]) * t.grid[1] + _clamp(int(x) // c, t.grid[1]))
        return fn

    def inspect_map(self):
        @friendly
        def fn(st: RunState, evt: gr.SelectData):
            if not st or not st.traces:
                return "<i>Generate first, then click a cell of any map.</i>"
            first = next(iter(st.traces.values()))
            hit = render.locate(len(st.traces), evt.index[0], evt.index[1], first.grid)
            if hit is None:
                return "<i>Click inside one of the maps.</i>"
            return html.inspector(list(st.traces.values())[hit[0]], hit[1])
        return fn

    def inspect_replay(self):
        @friendly
        def fn(st: RunState, method: str, evt: gr.SelectData):
            if not st or method not in st.traces:
                return "<i>Generate first.</i>"
            t = st.traces[method]
            hit = render.locate(1, evt.index[0], evt.index[1], t.grid, panels.REPLAY_PX)
            return html.inspector(t, hit[1]) if hit else "<i>Click inside the grid.</i>"
        return fn

    @friendly
    def replay(self, st: RunState, method: str, step):
        """The step slider moved: (image, caption)."""
        return as_tuple(("replay_image", "replay_caption"), self._replay(st, method, int(step or 0), False))

    @friendly
    def replay_pick(self, st: RunState, method: str):
        """Another run picked: (step slider reset to its range, image, caption)."""
        return as_tuple(("replay_step", "replay_image", "replay_caption"), self._replay(st, method, 0, True))

    def _replay(self, st: RunState, method: str, step: int, slider: bool) -> dict:
        if not st or method not in st.traces:
            return {"replay_caption": "Generate first, then scrub through the run."}
        t = st.traces[method]
        img, caption = panels.replay_image(t, st.images.get(method), step)
        upd = {"replay_image": img, "replay_caption": caption}
        if slider:
            upd["replay_step"] = gr.Slider(minimum=0, maximum=len(t.steps) - 1, value=min(step, len(t.steps) - 1),
                                           step=1, interactive=True)
        return upd

    @friendly
    def export(self, st: RunState):
        if not st or not st.traces:
            raise gr.Error("Nothing to export yet: generate first.")
        with trimmed_heap():
            return [str(p) for p in export_run(st.traces, st.images, st.prompt, self.export_root)]

    @friendly
    def sweep(self, method: str, param: str, values: str, prompts, progress=gr.Progress()):  # noqa: B008 (Gradio API)
        from specviz.sweep_tab import run_sweep
        return run_sweep(method, param, str(values), int(prompts or 2), self.export_root, progress)


def is_api_call(request) -> bool:
    """Whether a gr.Request comes from gradio_client (it sends `x-gradio-user: api` with every call), not a page."""
    headers = getattr(request, "headers", None) or {}
    return headers.get("x-gradio-user") == "api"


def only_changed(upd: dict, sent: dict) -> dict:
    """A streamed update with every picture that is the very object sent last time (a finished lane), and every map
    not in it, as None: a client that fetches files fetches nothing. Not gr.skip(): each skipped picture left a
    component copy in the session for good (Gradio 6.31; scripts/soak.py counted +25 images a run). `sent`
    (picture name -> object) is updated. Text and None go out as values: skipping them saves no fetch and costs more
    server time than resending (docs/gradio.md, issue 14)."""
    out = upd | {f"map_{k}": None for k in panels.KINDS if f"map_{k}" not in upd}
    for name, v in out.items():
        if v is None or not name.startswith(("img_", "map_")):
            continue
        if sent.get(name) is v:
            out[name] = None
        sent[name] = v
    return out


def api_params(fn, names: list, defaults: dict, request: bool = False):
    """`fn(*args)` with a signature naming each positional input (Gradio names API parameters after the handler's
    signature: without this the API shows param_0, param_1, ...). Defaults let API callers omit parameters.
    `request`: also pass the call's gr.Request as the last argument (not an API parameter)."""
    P = inspect.Parameter
    if inspect.isgeneratorfunction(fn):
        def named(*args):
            yield from fn(*args)
    else:
        def named(*args):
            return fn(*args)
    named.__name__ = getattr(fn, "__name__", "handler")
    params = [P(n, P.POSITIONAL_OR_KEYWORD, default=defaults[n]) for n in names]
    if request:                         # Gradio finds gr.Request parameters by their type hints
        params.append(P("request", P.POSITIONAL_OR_KEYWORD, default=None, annotation=gr.Request))
        named.__annotations__ = {"request": gr.Request}
    named.__signature__ = inspect.Signature(params)
    return named


def slot_visibility(methods) -> list:
    return [gr.Column(visible=m in (methods or [])) for m in METHODS]


def _typed(knobs: dict) -> dict:
    """UI numbers arrive as floats: cast each knob to its registry kind (validation happens in RunConfig)."""
    out = dict(knobs)
    for name, v in knobs.items():
        if name == "prompt":
            continue
        k = knob(name)
        if v is None and k.kind is not str:
            raise ConfigError(f"{name} is empty; enter {'a whole number' if k.kind is int else 'a number'}")
        out[name] = k.cast(v)
    out["prompt"] = (out.get("prompt") or "").strip()
    return out


def _path(f) -> str:
    return f if isinstance(f, str) else getattr(f, "path", None) or getattr(f, "name", "")


def _out_of_memory(e: Exception) -> bool:
    if isinstance(e, (MemoryError, torch.OutOfMemoryError)):
        return True
    text = str(e).lower()
    return isinstance(e, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


def release_memory() -> None:
    """After an aborted run: drop its garbage now and hand cached accelerator blocks back."""
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


@contextlib.contextmanager
def trimmed_heap():
    """Run a block, then hand the C heap's free pages back to the system (glibc's malloc_trim; elsewhere nothing).
    A run or an export frees its big buffers (an export's video frames: ~300 MB) but glibc keeps the pages: the
    server's resident memory climbed to each new high-water mark and stayed (scripts/soak.py). Costs a few ms."""
    try:
        yield
    finally:
        if _LIBC is not None:
            _LIBC.malloc_trim(0)


def _libc():
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


_LIBC = _libc()


def _clamp(v: int, n: int) -> int:
    return max(0, min(n - 1, v))
