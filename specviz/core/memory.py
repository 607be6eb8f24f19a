"""Memory of this process, for the app's status line and the bench's peak-memory column.

CUDA: torch's caching-allocator counters (memory_allocated / max_memory_allocated: tensors, not the CUDA context or
the allocator's reserve). CPU: the process's resident set size, now (/proc/self/statm) and its peak
(VmHWM, or getrusage's ru_maxrss off Linux; never lowered, so a CPU peak covers the whole process so far). The
kernel syncs per-thread RSS counters lazily (every 64 page faults), so the CPU figures may lag by a few hundred kB."""
from __future__ import annotations

import os
import resource
import sys

import torch


def _cuda(device) -> bool:
    kind = torch.device(device).type if device is not None else ("cuda" if torch.cuda.is_available() else "cpu")
    return kind == "cuda"


def memory_in_use(device=None) -> int:
    """Bytes in use now: CUDA tensors on `device` (default: CUDA when available), else this process's RSS."""
    if _cuda(device):
        return int(torch.cuda.memory_allocated(device))
    with open("/proc/self/statm") as f:                  # Linux: pages (size, resident, ...)
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_memory(device=None) -> int:
    """Peak bytes: CUDA max_memory_allocated since the last reset_peak(), else the process's peak RSS."""
    if _cuda(device):
        return int(torch.cuda.max_memory_allocated(device))
    try:
        with open("/proc/self/status") as f:             # Linux: VmHWM, the peak RSS in kB
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(rss if sys.platform == "darwin" else rss * 1024)    # bytes on macOS, KiB elsewhere


def reset_peak(device=None) -> None:
    """Start a new CUDA peak (a CPU peak RSS cannot be reset: it stays the process's)."""
    if _cuda(device):
        torch.cuda.reset_peak_memory_stats(device)

