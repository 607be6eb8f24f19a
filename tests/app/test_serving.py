"""The served app stays quiet when nobody uses it: `python app.py` as a real process, CPU from /proc."""
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


@pytest.mark.slow
def test_idle_app_uses_almost_no_cpu(tmp_path):
    with serving.served_app("--threads", "1", log_path=tmp_path / "app.log") as (proc, _):
        time.sleep(2)                                       # let start-up work (first page, caches) settle
        c0, t0 = serving.cpu_seconds(proc.pid), time.monotonic()
        time.sleep(10)
        cores = (serving.cpu_seconds(proc.pid) - c0) / (time.monotonic() - t0)
    assert cores <= IDLE_CORES, f"idle app used {cores:.3f} of a core over 10 s (limit {IDLE_CORES})"
