"""engine/clock.py: a run's seconds inside the target's prefill and forwards, and the rest (the engine's own work),
in the trace summary, the bench's rows and the paper table (tests/analysis/test_bench_paper.py). A clock that reads
1, 2, 3, ... makes every timed call last exactly one second, so the forwards' seconds count the calls made."""
from __future__ import annotations

import itertools

import torch

from specviz.engine import clock
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from specviz.engine.stub import StubTarget, stub_factory


class _Ticks:
    """time.perf_counter stand-in for the clock module only: 1, 2, 3, ... one per reading."""

    def __init__(self):
        self.count = itertools.count(1)

    def perf_counter(self) -> float:
        return float(next(self.count))


def forwards_are_the_clocked_calls(mp=None):
    """Every target call of a run is clocked, the prefill included: with one second per call, forward_seconds is the
    number of target forwards (the prefill is step 0), for a chain, a tree and a wavefront method, both noises; the
    engine's seconds are the rest of the wall time; Progress carries the running total."""
    import pytest  # noqa: PLC0415 - a MonkeyPatch of our own when called as a mutation detector
    own = mp is None
    mp = mp or pytest.MonkeyPatch()
    try:
        mp.setattr(clock, "time", _Ticks())
        for method in ("ar", "sjd", "sd", "pjd"):
            for noise in ("papers", "keyed"):
                gen = decode(StubTarget(64, (4, 4)), RunConfig(method=method, prompt="stub", noise=noise), stub_factory)
                seen = [p.forward_seconds for p in gen]
                trace = drain(decode(StubTarget(64, (4, 4)), RunConfig(method=method, prompt="stub", noise=noise),
                                     stub_factory)).trace
                n = trace.summary["target_forwards"]
                assert trace.summary["forward_seconds"] == n == seen[-1], (method, noise)
                assert seen == [float(i + 1) for i in range(len(seen))], (method, noise)
                assert trace.summary["engine_seconds"] == round(max(0.0, trace.summary["seconds"] - n), 4)
    finally:
        if own:
            mp.undo()


def cuda_forwards_wait_for_the_device():
    """On CUDA the clock waits for the device before and after each timed call (queued engine work is not the
    forward's; the forward's own kernels are): two waits a call once the outputs' device is known."""
    waits = []
    real = torch.cuda.synchronize
    try:
        torch.cuda.synchronize = lambda device=None: waits.append(device)
        c = clock.ForwardClock()
        c.device = torch.device("cuda")
        c.run(lambda: (torch.zeros(2), None))
        c.run(lambda: (torch.zeros(2), None))
    finally:
        torch.cuda.synchronize = real
    assert waits == [torch.device("cuda")] * 4
    cpu = clock.ForwardClock()
    cpu.run(lambda: (torch.zeros(2), None))
    assert cpu.device == torch.device("cpu") and cpu.seconds >= 0


def test_forwards_are_the_clocked_calls(monkeypatch):
    forwards_are_the_clocked_calls(monkeypatch)


def test_cuda_forwards_wait_for_the_device():
    cuda_forwards_wait_for_the_device()
