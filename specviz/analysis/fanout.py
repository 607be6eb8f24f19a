"""The Ray fan-out shared by the sweep and the atlas: one definition of how jobs become one-CPU Ray tasks."""
from __future__ import annotations

from typing import Callable, Iterable, Iterator

import torch


def ray_map(address: str, fn: Callable, items: Iterable) -> Iterator:
    """fn(item) for every item as a one-CPU Ray task with one torch thread, connecting to `address` ('auto' = the
    local cluster, started if needed); yields each result as its task finishes (not in item order)."""
    import ray  # optional dependency (requirements-ray.txt): only a --ray run needs it

    ray.init(address=None if address == "auto" else address, ignore_reinit_error=True, include_dashboard=False,
             log_to_driver=False)

    @ray.remote(num_cpus=1)
    def task(item):
        torch.set_num_threads(1)
        return fn(item)

    pending = [task.remote(item) for item in items]
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        yield ray.get(ready[0])
