"""How much of a run's time is the target's forwards, and how much is everything else (so that a latency figure says
what it measured).

Every prefill and forward of a run goes through one `ForwardClock` (decode.py, families.Ctx.forward), which adds the
seconds spent inside them to `seconds`. On CUDA a forward returns before its kernels finish, so the clock waits for
the device before each of its two readings (work queued before the forward is not counted as the forward's, and the
forward's own kernels are): the run's `engine_seconds` (summary.py) is then its wall time minus the forwards'. On the
CPU nothing is queued and nothing waits.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import torch


def _tensor_in(out: Any) -> torch.Tensor | None:
    """The first tensor a forward or prefill returned (a tuple of tensors, or a record with `logits`)."""
    if torch.is_tensor(out):
        return out
    if isinstance(out, tuple | list):
        return next((t for t in out if torch.is_tensor(t)), None)
    logits = getattr(out, "logits", None)
    return logits if torch.is_tensor(logits) else None


class ForwardClock:
    """Seconds inside the target's forwards of one run (`seconds`)."""

    def __init__(self):
        self.seconds, self.device = 0.0, None           # device: where the forwards' outputs live, once seen

    def _wait(self) -> None:
        if self.device is not None and self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def run(self, fn: Callable, *args) -> Any:
        """fn(*args), its seconds added to `seconds`."""
        self._wait()
        t0 = time.perf_counter()
        out = fn(*args)
        if self.device is None and (t := _tensor_in(out)) is not None:
            self.device = t.device
        self._wait()
        self.seconds += time.perf_counter() - t0
        return out
