"""The side-by-side race (docs/design.md §6): several methods advance on a common clock of target forwards — at tick t
every unfinished method makes one more target forward — and throttled frames show the partial images.

Everything here is per call: `race` owns its decoding generators and closes them in `finally` (a cancelled UI
event closes the race at its next yield, so Stop lands within one tick). No module state is mutated per request.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Iterator

import numpy as np
import torch

from specviz.analysis import paired
from specviz.core import memory
from specviz.core.trace import Trace
from specviz.engine import registry
from specviz.engine.config import RunConfig
from specviz.engine.decode import Progress, decode
from specviz.render.lane_view import LaneView
from specviz.render.panels import race_frame

RACE_PX = 240                                      # side of a race panel


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
        needs = registry.get(cfg.method).family.needs_drafter
        self.drafter = factory.label if needs else ""
        self.last: Progress | None = None
        self.drawn, self.picture, self.raw = -1, None, None
        self.board, self.read = {}, 0                  # pos -> committed token, from the trace's first `read` steps
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
        for st in p.trace.steps[self.read:]:
            self.board.update((ev.pos, ev.token) for ev in st.events if ev.commits)
        self.read = len(p.trace.steps)
        full, decided = painted(p.tokens, self.board, gh * gw)
        n = int(decided.sum())
        if n != self.drawn:
            self.raw = self.model.decode_image(torch.tensor(full)).convert("RGB")
            self.picture, self.drawn = race_frame(self.raw, decided.reshape(gh, gw), (gh, gw), px), n
        return LaneView(self.cfg.method, self.picture, len(p.trace.steps), n, gh * gw, p.done,
                        sum(s.seconds for s in p.trace.steps), self.drafter, p.trace.config, mem_peak=self.peak,
                        mem_cuda=self.cuda, grid=(gh, gw), forward_seconds=p.forward_seconds)


def painted(tokens: list, board: dict, n_pos: int) -> tuple[list, np.ndarray]:
    """What a lane draws: (n_pos tokens, n_pos bool decided). Decided: the committed raster prefix `tokens` and
    every position the trace committed (`board`: pos -> token), so a method that decodes several rows at once
    (zipar, pjd) paints its wavefront; undecided cells repeat the last prefix token (a neutral fill, hatched)."""
    tokens = list(tokens[:n_pos])
    fill = tokens[-1] if tokens else next(iter(board.values()), 0)
    full = tokens + [fill] * (n_pos - len(tokens))
    decided = np.zeros(n_pos, bool)
    decided[:len(tokens)] = True
    for pos, tok in board.items():
        if len(tokens) <= pos < n_pos:
            full[pos], decided[pos] = tok, True
    return full, decided


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
