"""Counting the engine's device -> host reads and its torch operator calls (scripts/engine_bench.py,
tests/engine/test_host_syncs.py).

On a GPU every read of a tensor's value by Python (`.item()`, `.tolist()`, `.cpu()`, `.numpy()`, and bool / int /
float / index of a tensor) waits for the device: a synchronisation. `HostReads` is a TorchFunctionMode that counts
them while it is active, on any device (on the CPU they cost little, but the count is the same)."""
from __future__ import annotations

from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

READS = frozenset({"item", "tolist", "cpu", "numpy", "__bool__", "__int__", "__float__", "__index__"})


class HostReads(TorchFunctionMode):
    """`with HostReads() as h: ...` -> h.count reads of tensor values by the host, h.names by kind."""

    def __init__(self):
        super().__init__()
        self.count, self.names = 0, {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in READS:
            self.count += 1
            self.names[name] = self.names.get(name, 0) + 1
        return func(*args, **(kwargs or {}))


class OperatorCalls(TorchDispatchMode):
    """`with OperatorCalls() as o: ...` -> o.count torch operator (aten) calls dispatched: each is one dispatch on
    the CPU and, unless it is a view, one kernel launch on a GPU; the step's fixed cost where its tensors are small.
    A count, so the same on a quiet and a loaded machine."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))
