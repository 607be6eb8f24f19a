"""Mutation-check variants for the split of a run's time into the target's forwards and the engine's own work
(engine/clock.py, families.Ctx.forward, decode's prefill)."""
from __future__ import annotations

from specviz.engine import clock, decode, families
from specviz.render.lane_view import LaneView
from tests.app.test_memory_shown import lanes_show_the_engine_s_share_of_their_time
from tests.engine.test_clock import cuda_forwards_wait_for_the_device, forwards_are_the_clocked_calls
from tests.support.mutants import Mutant


def _unclocked(self, state, tokens, positions, mask=None):
    """Wrong: the forward called straight, outside the run's clock."""
    return self.model.forward(state, tokens, positions, mask)


class _PrefillUncounted(clock.ForwardClock):
    """Wrong: the first timed call (the prefill) is not counted."""

    def run(self, fn, *args):
        if getattr(fn, "__name__", "") == "prefill":
            return fn(*args)
        return super().run(fn, *args)


def _wait_after_only(self, fn, *args):
    """Wrong: no wait before the clock starts (queued engine work counted as the forward's)."""
    t0 = clock.time.perf_counter()
    out = fn(*args)
    if self.device is None and (t := clock._tensor_in(out)) is not None:
        self.device = t.device
    self._wait()
    self.seconds += clock.time.perf_counter() - t0
    return out


VARIANTS = [
    Mutant("a lane shows its forwards' seconds as the engine's",
           lambda mp: mp.setattr(LaneView, "engine_seconds", property(lambda v: v.forward_seconds)),
           (lanes_show_the_engine_s_share_of_their_time,)),
    Mutant("the family's forward is not clocked", lambda mp: mp.setattr(families.Ctx, "forward", _unclocked),
           (forwards_are_the_clocked_calls,)),
    Mutant("the prefill is not clocked", lambda mp: mp.setattr(decode, "ForwardClock", _PrefillUncounted),
           (forwards_are_the_clocked_calls,)),
    Mutant("the clock waits for CUDA only after a forward",
           lambda mp: mp.setattr(clock.ForwardClock, "run", _wait_after_only), (cuda_forwards_wait_for_the_device,)),
]
