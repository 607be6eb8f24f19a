"""The C heap's policy for a long-running server (glibc; elsewhere nothing happens).

glibc serves a block of 128 KiB or more from its own mapping, but raises that threshold each time such a block is
freed, so later images, maps and PNG buffers come from the heap and stay resident: a served app grew ~0.36 MB a run
with the default (docs/serving.md). `map_big_blocks()` fixes the threshold at 128 KiB, as MALLOC_MMAP_THRESHOLD_=131072
does; it must run before torch and gradio fill the heap (set later, it does not help: docs/gradio.md), so app.py
calls it first. `trim()` hands freed pages back after a run or an export."""
from __future__ import annotations

import ctypes

M_MMAP_THRESHOLD = -3                                   # glibc's mallopt parameter number (malloc.h)
THRESHOLD = 128 * 1024


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def _libc():
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:                                     # not glibc (macOS, musl): the policy does not apply
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


LIBC = _libc()


def map_big_blocks(threshold: int = THRESHOLD) -> bool:
    """Fix glibc's mmap threshold (which also stops its dynamic raising); True when applied."""
    return bool(LIBC is not None and LIBC.mallopt(M_MMAP_THRESHOLD, threshold) == 1)


def trim() -> None:
    """Hand the heap's free pages back to the system (malloc_trim(0))."""
    if LIBC is not None:
        LIBC.malloc_trim(0)


def mapped_blocks() -> int | None:
    """How many blocks are served from their own mapping now (mallinfo2's hblks; None without glibc 2.33+)."""
    if LIBC is None or not hasattr(LIBC, "mallinfo2"):
        return None
    LIBC.mallinfo2.restype = _MallInfo2
    return int(LIBC.mallinfo2().hblks)
