"""The one speculative loop: draft -> one target forward -> rule -> commit -> yield a step record.

`decode(model, cfg)` is a generator of `Progress` records; the CLI, the bench and the app all drain it. Every
registered method (methods.py) runs through it: its drafter family's `step()` (families.py) does one verification
step. Randomness is one object chosen from cfg.noise and cfg.seed (engine/randomness.py).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterator

from specviz.core.knobs import ConfigError
from specviz.core.records import StepEvent
from specviz.core.sampling import target_probs
from specviz.core.trace import Trace
from specviz.engine import registry
from specviz.engine.clock import ForwardClock
from specviz.engine.config import RunConfig
from specviz.engine.drafters.protocols import DrafterFactory
from specviz.engine.events import simple_event
from specviz.engine.families import Ctx, host
from specviz.engine.randomness import choose
from specviz.engine.summary import summarize


@dataclass
class Progress:
    """One verification step of a run (what the UI draws after each target forward)."""
    step: StepEvent
    tokens: list                 # committed tokens so far, raster order
    trace: Trace                 # the growing trace (summary filled when done)
    done: bool
    forward_seconds: float = 0.0     # of the run's wall time so far, the seconds inside the target's forwards


def decode(model, cfg: RunConfig, drafter_factory: DrafterFactory | None = None,
           record: bool = True) -> Iterator[Progress]:
    """Run cfg.method on `model`. drafter_factory(model, cfg, rnd) builds the tree drafter for tree methods.
    A tree method without a drafter fails here, before any model work."""
    method = registry.get(cfg.method)
    if method.family.needs_drafter and drafter_factory is None:
        tree = ", ".join(m.name for m in registry.REGISTRY.values() if m.family.needs_drafter)
        raise ConfigError(f"{cfg.method} needs a tree drafter: the scenes model ships one "
                          "(assets/drafter.safetensors); for other models choose a Drafter (the draft_model knob: "
                          "`--draft-model ID|PATH` for the CLI and for `python app.py`), or untick the tree methods "
                          f"({tree})")
    return _decode(model, cfg, method, drafter_factory, record)


def _decode(model, cfg: RunConfig, method, drafter_factory: DrafterFactory | None,
            record: bool) -> Iterator[Progress]:
    rnd = choose(cfg, model.codebook_size)
    n_pos = model.grid[0] * model.grid[1]
    trace = Trace(cfg.method, model.name, list(model.grid), cfg.to_dict() | rnd.record)
    clock = ForwardClock()
    t_start = t0 = time.perf_counter()
    pf = clock.run(model.prefill, cfg.prompt, cfg.cfg_scale)
    q0 = target_probs(host(pf.logits), cfg.temperature, cfg.top_k, cfg.top_p)
    committed = [rnd.first(q0)]
    ev = [simple_event(0, committed[0], "ar", q0, cfg, rnd)] if record else []
    trace.steps.append(StepEvent(0, time.perf_counter() - t0, ev))
    yield Progress(trace.steps[-1], committed, trace, n_pos == 1, clock.seconds)

    ctx = Ctx(model, cfg, method, rnd, method.accept_fn(cfg, model), n_pos, record, clock)
    family = method.family(ctx, drafter_factory)
    family.start(committed, pf.hidden)
    while len(committed) < n_pos:
        t0 = time.perf_counter()
        out = family.step(pf.state, committed)
        committed += out.new
        trace.steps.append(StepEvent(len(trace.steps), time.perf_counter() - t0, out.events, out.drafted))
        done = len(committed) >= n_pos
        if done:
            trace.tokens = committed[:n_pos]
            summarize(trace, time.perf_counter() - t_start, clock.seconds)
        yield Progress(trace.steps[-1], committed, trace, done, clock.seconds)


def drain(progress: Iterator[Progress]) -> Progress:
    """Run a decode generator to the end; return its last record (the finished trace is .trace)."""
    last = None
    for last in progress:  # noqa: B007
        pass
    return last
