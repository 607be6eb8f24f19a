"""core.memory: the CPU figures follow a real allocation; CUDA reads the allocator's counters."""
import mmap

import torch

from specviz.core import memory, numbers


def test_cpu_rss_grows_with_an_allocation_and_the_peak_keeps_it():
    before = memory.memory_in_use("cpu")
    # 64 MiB mapped and touched page by page: its own mapping whatever malloc's mmap threshold is now (an earlier
    # test in the same process may have raised it, and then a freed numpy block stays in the heap)
    block = mmap.mmap(-1, 64 << 20)
    for i in range(0, 64 << 20, mmap.PAGESIZE):
        block[i] = 1
    during = memory.memory_in_use("cpu")
    assert during - before >= 60 << 20
    slack = 1 << 20                                            # the kernel's lazily synced per-thread RSS counters
    assert memory.peak_memory("cpu") >= during - slack
    block.close()
    assert memory.memory_in_use("cpu") < during - (32 << 20)   # unmapped: the RSS falls
    assert memory.peak_memory("cpu") >= during - slack         # a peak never goes down


def test_cuda_reads_the_allocator(monkeypatch):
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda d=None: 123)
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda d=None: 456)
    calls = []
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda d=None: calls.append(d))
    assert memory.memory_in_use("cuda") == 123 and memory.peak_memory("cuda") == 456
    memory.reset_peak("cuda"), memory.reset_peak("cpu")
    assert calls == ["cuda"]
    assert numbers.gib(3 * 2**29) == "1.50 GiB"
