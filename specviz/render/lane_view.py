"""One method's lane in one frame of the race, as the page draws it (html.lane_stats its counters, the lane picture
its image). app/race.py makes one per lane and frame; opened traces make one per lane (app/handlers.open_traces)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
    grid: tuple | None = None                       # (rows, columns) of the lane's grid (the page's keyboard path)
    forward_seconds: float | None = None            # of `seconds`, inside the target's prefill and forwards
                                                    # (engine/clock.py; None: not measured, e.g. opened traces)

    @property
    def engine_seconds(self) -> float | None:
        """Of `seconds`, the engine's own work (drafting, the rules, the record); None when not measured."""
        return None if self.forward_seconds is None else max(0.0, self.seconds - self.forward_seconds)

    @property
    def compression(self) -> float:
        return self.committed / max(1, self.forwards)
