"""The side-by-side race (docs/design.md §6): several methods advance on a common clock of target forwards — at tick t
every unfinished method makes one more target forward — and throttled frames show the partial images.

Everything here is per call: `race` owns its decoding generators and closes them in `finally` (a cancelled UI
event closes the race at its next yield, so Stop lands within one tick). No module state is mutated per request.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import torch
from huggingface_hub import try_to_load_from_cache

from specviz.analysis import paired
from specviz.core import memory
from specviz.core.trace import Trace
from specviz.engine import methods
from specviz.engine.config import METHODS, ConfigError, RunConfig
from specviz.engine.decode import Progress, decode
from specviz.engine.drafters import drafter_factory
from specviz.engine.summary import summarize
from specviz.engine.validate import read_trace
from specviz.models import ALLOWED_HUB, converted_models, load_model
from specviz.render.panels import race_frame

RACE_PX = 240                                      # side of a race panel
Loader = Callable[..., tuple[Any, Any]]            # (model name[, draft model]) -> (model, tree drafter factory)


@dataclass(frozen=True)
class Backend:
    """Where models come from: the app's default loads from assets / the local HF cache; tests inject tiny ones."""
    load: Loader
    models: tuple                                   # names the UI offers
    live: tuple = ("scenes",)                       # models on which releasing a slider re-runs the methods
    allow_paths: bool = False                       # accept a local checkpoint directory typed into the UI
    drafters: tuple = ()                            # draft models the UI offers for tree methods ("" = own drafter)


def available_models() -> tuple:
    """'scenes' always; converted directories under $SPECVIZ_MODELS (models.converted_models); the allow-listed
    Janus-Pro checkpoints only when their files are in the local HF cache."""
    out = ["scenes", *converted_models()]
    for repo in ALLOWED_HUB:
        if isinstance(try_to_load_from_cache(repo, "config.json"), str):
            out.append(repo)
    return tuple(out)


class LoadError(ValueError):
    """A model could not be loaded; the message says which and why."""


def load(backend: Backend, name: str, draft: str = ""):
    """backend.load (with a draft model when one is chosen) with every failure turned into one clear LoadError
    (out-of-memory stays itself)."""
    try:
        return backend.load(name, draft) if draft else backend.load(name)
    except (MemoryError, torch.OutOfMemoryError):
        raise
    except Exception as e:                              # noqa: BLE001 - any loader failure becomes one message
        what = f"model {name!r}" + (f" with draft model {draft!r}" if draft else "")
        raise LoadError(f"could not load {what} ({type(e).__name__}: {e}); "
                        "the app is still usable with the other models") from None


def default_backend(device: str = "auto", allow_paths: bool = False, drafters: tuple = ()) -> Backend:
    """Models from assets / the local HF cache / $SPECVIZ_MODELS. Draft models offered: `drafters` (e.g. app.py
    --draft-model), the allow-listed Janus-Pro-1B when it is cached, and the converted directories."""

    def load(name: str, draft: str = ""):
        model = load_model(name, device)
        return model, drafter_factory(model, load_model(draft, device) if draft else None)
    cached = tuple(m for m in available_models() if m == ALLOWED_HUB[0] or m in converted_models())
    return Backend(load, available_models(), ("scenes",), allow_paths, tuple(dict.fromkeys(drafters + cached)))


def check_model(backend: Backend, name: str) -> str:
    if name in backend.models or (backend.allow_paths and name and name.strip()):
        return name.strip()
    raise ConfigError(f"model {name!r} is not offered here; choose one of {', '.join(backend.models)} "
                      "(local checkpoint paths need `python app.py --allow-paths`)")


def check_draft(backend: Backend, name: str) -> str:
    """'' (the model's own drafter), an offered draft model, or — with --allow-paths — a local checkpoint."""
    if name is not None and not isinstance(name, str):
        raise ConfigError(f"draft model must be a name or a path, got {name!r}")
    name = (name or "").strip()
    if not name or name in backend.drafters or backend.allow_paths:
        return name
    offered = ", ".join(backend.drafters) or "none (start the app with --draft-model ID|PATH)"
    raise ConfigError(f"draft model {name!r} is not offered here; offered: {offered}")


def read_traces(backend: Backend, paths) -> tuple[dict, dict, str]:
    """Trace JSON files (from the CLI, an export or anyone) -> (method -> checked Trace, method -> image, note).
    Images are decoded only when the trace's model is offered here and fits; the maps need no model."""
    paths = [p for p in (paths or []) if p]
    if not paths:
        raise ConfigError("choose one or more trace JSON files (Export writes them; so does `specviz generate`)")
    if len(paths) > len(METHODS):
        raise ConfigError(f"open at most {len(METHODS)} traces at once (one per method), got {len(paths)}")
    traces: dict[str, Trace] = {}
    for p in paths:
        name = Path(str(p)).name
        try:
            t = read_trace(p)
        except (ValueError, OSError) as e:
            raise ConfigError(f"{name}: {e}") from None
        if t.method in traces:
            raise ConfigError(f"{name}: a second trace for {t.method}; open one trace per method")
        grids = {tuple(o.grid) for o in traces.values()}
        if grids and tuple(t.grid) not in grids:
            raise ConfigError(f"{name}: grid {t.grid} differs from the other traces' {list(grids.pop())}")
        summarize(t, sum(s.seconds for s in t.steps))          # never trust a file's own summary
        traces[t.method] = t
    traces = {m: traces[m] for m in METHODS if m in traces}
    return traces, *_decode_all(backend, traces)


def _decode_all(backend: Backend, traces: dict) -> tuple[dict, str]:
    names = {t.model for t in traces.values()}
    name = next(iter(names))
    if len(names) > 1 or name not in backend.models:
        return {}, f"images not decoded: {', '.join(sorted(names))} is not offered here (the maps need no model)"
    model, _ = load(backend, name)
    images = {}
    for m, t in traces.items():
        fits = list(model.grid) == t.grid and len(t.tokens) == t.grid[0] * t.grid[1]
        if fits and max(t.tokens) < model.codebook_size:
            images[m] = np.asarray(model.decode_image(torch.tensor(t.tokens)).convert("RGB"))
    missing = sorted(set(traces) - set(images))
    return images, (f"decoded with {name}" + (f"; no image for {', '.join(missing)} (tokens do not fit the model)"
                                              if missing else ""))


def default_draft(backend: Backend, model: str, draft: str, chosen) -> str:
    """The draft model a run uses: the caller's choice (`draft`, checked); else, when tree methods run on a model
    without a drafter of its own (anything but scenes) and the app offers exactly one draft model, that one."""
    needs = any(m in methods.REGISTRY and methods.get(m).family.needs_drafter for m in (chosen or []))
    if draft or model == "scenes" or not needs or len(backend.drafters) != 1:
        return draft
    return backend.drafters[0]


def make_configs(methods, **knobs) -> list[RunConfig]:
    """One validated RunConfig per selected method (same seed and knobs), in the canonical METHODS order. A method
    that drafts no tree gets no draft model: each config (and so each trace) names the drafter that actually ran."""
    chosen = [m for m in METHODS if m in (methods or [])]
    if not chosen:
        raise ConfigError("choose at least one method to compare")
    return [RunConfig(method=m, **_drafted(m, knobs)) for m in chosen]


def _drafted(method: str, knobs: dict) -> dict:
    return knobs if methods.get(method).family.needs_drafter else {**knobs, "draft_model": ""}


@dataclass(frozen=True)
class LaneView:
    """One method's panel in one frame."""
    method: str
    image: Any                                      # PIL image (partial, undecided cells hatched)
    forwards: int
    committed: int
    positions: int
    done: bool
    seconds: float                                  # this method's own compute time so far
    drafter: str = ""                               # tree methods: which drafter proposed the trees
    config: dict | None = None                      # the run's config (the lane header shows its knob values)
    vs_ar: int | None = None                        # keyed noise: tokens changed against the race's AR (None: no AR)
    mem_peak: int | None = None                     # bytes: CUDA, peak allocated over this lane's forwards; CPU, the
    mem_cuda: bool = False                          # process's peak RSS so far (None: not measured, e.g. opened)

    @property
    def compression(self) -> float:
        return self.committed / max(1, self.forwards)


@dataclass(frozen=True)
class Frame:
    tick: int                                       # target forwards on the common clock
    lanes: tuple
    done: bool
    traces: dict = field(default_factory=dict)     # method -> Trace so far (live: read it before the next frame)
    images: dict = field(default_factory=dict)     # method -> (h, w, 3) uint8 final image (final frame only)
    memory: tuple | None = None                     # (bytes in use now, the race's peak bytes, on CUDA?)


class _Lane:
    def __init__(self, model, cfg: RunConfig, factory):
        self.cfg, self.model = cfg, model
        self.gen = decode(model, cfg, factory)
        needs = methods.get(cfg.method).family.needs_drafter
        self.drafter = getattr(factory, "label", "") if needs else ""
        self.last: Progress | None = None
        self.drawn, self.picture, self.raw = -1, None, None
        self.device = getattr(model, "device", "cpu")   # the toy models live on the CPU
        self.cuda, self.peak = torch.device(self.device).type == "cuda", 0

    @property
    def done(self) -> bool:
        return self.last is not None and self.last.done

    def advance(self) -> None:
        """One forward; the lane's peak is the highest CUDA peak over its own forwards (reset before each), on the
        CPU the process's peak RSS (it cannot be reset)."""
        memory.reset_peak(self.device)
        self.last = next(self.gen)
        self.peak = max(self.peak, memory.peak_memory(self.device))

    def view(self, px: int) -> LaneView:
        p = self.last
        gh, gw = self.model.grid
        n = len(p.tokens)
        if n != self.drawn:
            self.picture, self.drawn = self._render(p.tokens, px), n
        return LaneView(self.cfg.method, self.picture, len(p.trace.steps), min(n, gh * gw), gh * gw, p.done,
                        sum(s.seconds for s in p.trace.steps), self.drafter, p.trace.config, mem_peak=self.peak,
                        mem_cuda=self.cuda)

    def _render(self, tokens: list, px: int):
        gh, gw = self.model.grid
        n_pos = gh * gw
        tokens = tokens[:n_pos]
        full = torch.tensor(tokens + [tokens[-1]] * (n_pos - len(tokens)))   # neutral fill: repeat the last code
        decided = np.zeros(n_pos, bool)
        decided[:len(tokens)] = True
        self.raw = self.model.decode_image(full).convert("RGB")
        return race_frame(self.raw, decided.reshape(gh, gw), (gh, gw), px)


def race(model, factory, cfgs: list[RunConfig], fps: float = 8.0, px: int = RACE_PX) -> Iterator[Frame]:
    """Run every config on one clock of target forwards; yield at most `fps` frames per second, always the first
    and the final one. Every frame carries the traces so far; the final one also the decoded images."""
    lanes = [_Lane(model, cfg, factory) for cfg in cfgs]              # decode() rejects tree methods without drafter
    try:
        tick, last = 0, -1.0
        while True:
            for lane in lanes:
                if not lane.done:
                    lane.advance()
            tick += 1
            done = all(lane.done for lane in lanes)
            if done or last < 0 or time.perf_counter() - last >= 1.0 / fps:
                yield _frame(tick, lanes, done, px)
                last = time.perf_counter()
            if done:
                return
    finally:
        for lane in lanes:
            lane.gen.close()


def _frame(tick: int, lanes: list, done: bool, px: int) -> Frame:
    traces: dict[str, Trace] = {lane.cfg.method: lane.last.trace for lane in lanes}
    counts = paired.against_ar(traces) if done else {}          # checked against AR's tokens of this very race
    views = tuple(replace(lane.view(px), vs_ar=counts.get(lane.cfg.method)) for lane in lanes)
    images = {lane.cfg.method: np.asarray(lane.raw) for lane in lanes} if done else {}
    used = (memory.memory_in_use(lanes[0].device), max(lane.peak for lane in lanes), lanes[0].cuda)
    return Frame(tick, views, done, traces, images, used)
