"""The served app stays quiet when nobody uses it (issue 14): `python app.py` as a real process, CPU from /proc."""
import platform
import subprocess
import sys
import time

import gradio as gr
import pytest

from specviz.app import serving

IDLE_CORES = 0.02       # the issue asks <= 0.05; Gradio's 1 ms / 10 ms polling measured 0.046-0.051 here, so 0.05
                        # would not catch it coming back. With serving.quiet_when_idle: 0.005-0.006.


def test_quiet_when_idle_sets_the_queue_polls():
    with gr.Blocks() as demo:
        gr.Markdown("x")
    queue = serving.quiet_when_idle(demo.queue())._queue
    assert (queue.sleep_when_free, queue.progress_update_sleep_when_free) == (serving.IDLE_POLL_S,
                                                                            serving.PROGRESS_POLL_S)


def test_idle_app_uses_almost_no_cpu(tmp_path):
    with serving.served_app("--threads", "1", log_path=tmp_path / "app.log") as (proc, _):
        time.sleep(2)                                       # let start-up work (first page, caches) settle
        c0, t0 = serving.cpu_seconds(proc.pid), time.monotonic()
        time.sleep(10)
        cores = (serving.cpu_seconds(proc.pid) - c0) / (time.monotonic() - t0)
    assert cores <= IDLE_CORES, f"idle app used {cores:.3f} of a core over 10 s (limit {IDLE_CORES})"


_HEAP_PROBE = """
import ctypes, sys
from specviz.app.stream import steady_heap
libc = ctypes.CDLL("libc.so.6")
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                                               "uordblks", "fordblks", "keepcost")]
libc.mallinfo2.restype = Info
libc.malloc.restype, libc.malloc.argtypes, libc.free.argtypes = ctypes.c_void_p, [ctypes.c_size_t], [ctypes.c_void_p]
if sys.argv[1] == "steady":
    assert steady_heap()
libc.free(libc.malloc(1 << 20))                 # glibc's default now raises its mmap threshold to 1 MiB
before = libc.mallinfo2().hblks
block = libc.malloc(1 << 20)
print(libc.mallinfo2().hblks - before)          # 1: the next MiB is mapped on its own (and unmapped when freed)
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt and mallinfo2")
def test_steady_heap_keeps_big_blocks_out_of_the_heap():
    """The served app's heap (stream.steady_heap): after a 1 MiB block is freed, the next 1 MiB block is still mapped
    on its own. Under glibc's default (the same probe without steady_heap) it comes from the heap: the probe can
    tell the two apart."""
    def probe(mode: str) -> int:
        out = subprocess.run([sys.executable, "-c", _HEAP_PROBE, mode], capture_output=True, text=True, timeout=120,
                             cwd=serving.ROOT)
        assert out.returncode == 0, out.stderr[-2000:]
        return int(out.stdout.split()[-1])
    assert probe("steady") == 1
    assert probe("default") == 0
