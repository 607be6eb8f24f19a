"""Serving the app: Gradio's idle polling, and `python app.py` as a child process (for the idle-CPU test and
scripts/app_latency.py). No model code here."""
from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

from specviz.core import owned

log = logging.getLogger("specviz.app")
ROOT = Path(__file__).resolve().parents[2]

# Gradio's queue (gradio/queueing.py, Queue.__init__) polls for new events every 1 ms while it is free and checks for
# progress updates every 10 ms on Linux (50 ms / 100 ms on Windows): two asyncio loops that keep an idle server busy.
# Measured on the 2-core dev machine (2026-12-01, `python app.py`, 10 s from /proc): 0.046-0.051 of a core idle with
# Gradio's values, 0.005-0.006 with 50 ms / 100 ms (0.007-0.008 with 20 ms). The price: a new event waits for the
# next poll, up to 50 ms (25 ms on average); a no-op event's round trip measured +32 and +54 ms (medians of 60 and 30
# calls, machine heavily loaded), and gr.Progress bars (the sweep tab) update at most 10 times a second. Frames a
# running event streams are sent as they are yielded, through neither loop.
IDLE_POLL_S = 0.05
PROGRESS_POLL_S = 0.1
_POLLS = {"sleep_when_free": IDLE_POLL_S, "progress_update_sleep_when_free": PROGRESS_POLL_S}


def quiet_when_idle(demo, polls: dict | None = None):
    """Set the queue's idle polling intervals of `demo` (a gr.Blocks, before or after launch); returns `demo`.
    The loops re-read the attributes on every turn, so a running server picks the new values up at once."""
    queue = demo._queue
    for name, seconds in (polls or _POLLS).items():
        if not hasattr(queue, name):           # a Gradio that renamed them: serve anyway, say so (the test fails)
            log.warning("gradio's Queue has no %s; idle CPU stays at Gradio's default", name)
            continue
        setattr(queue, name, seconds)
    return demo


# Gradio 6.31 keeps a copy of a component for good once an update replaced it and the copy is then an input: the
# update stores `Component(**new props)` (a fresh `_id`) under the component's id in the session, and input
# preprocessing stores the block it used under *its own* `_id` if absent (gradio/blocks.py, `if block._id not in state:
# state[block._id] = block`). Every run gives the replay's clock slider a new range and its Run radio new choices,
# so one session (a gradio_client caller, or a page left open) gained a Slider and a Radio per scrubbed run — the
# 200-run soak's last steady growth (docs/gradio.md).
def drop_copies(demo, request) -> int:
    """Forget, in the session of `request` (a gr.Request), every block that is not one of `demo`'s own (the copies
    above); the current copy of each component stays under the component's id. Returns how many were dropped. The
    app has no gr.render, whose containers would be such blocks."""
    holder, sid = getattr(demo, "state_holder", None), getattr(request, "session_hash", None)
    session = holder.session_data.get(sid) if holder is not None and sid else None
    if session is None:
        return 0
    stray = [k for k in list(session.blocks_config.blocks) if k not in demo.blocks]
    for k in stray:
        session.blocks_config.blocks.pop(k, None)
        session.config_values.pop(k, None)
    return len(stray)


# -- the queue, as a waiting page sees it -----------------------------------------------------------------------------
# Runs share one model: their events have concurrency_id "model", limit 1 (app.py), so a second page's run waits in
# Gradio's queue. Gradio's client keeps each page told of its place (the queue's "estimation" messages) and draws it
# as the run's status tracker on the status line: "queue: 1/1 | 3.4s", then "processing | 0.4s" until the first frame
# — small, faint text laid over the status line's own words. WAIT_JS reads that tracker (Gradio's own queue status;
# nothing is polled from the server) and says it in the status line's words instead: "waiting for another run (N s)",
# N whole seconds since the page was queued, counting, until its run starts; WAIT_CSS hides Gradio's tracker text on
# the status line (it covered the line's words) and, while waiting, the last run's words (the wait line takes their
# place, so the line does not grow under the lanes). tests/browser/test_browser_wait.py: two pages on one app.
WAIT_WORDS = "waiting for another run ({s} s)"
WAIT_CSS = """
#status [data-testid=status-tracker] .progress-text, #status [data-testid=status-tracker] .meta-text,
#status [data-testid=status-tracker] .meta-text-center, #status [data-testid=status-tracker] .eta-bar {
  visibility: hidden !important;}
#status.sv-waiting .html-container {display: none !important;}
.sv-wait {font-size: 15px; color: #9a3412;}
"""
WAIT_JS = """
() => {
  let since = null, clock = null;
  const queued = s => {                                  // Gradio's tracker on the status line says "queue: i/n"
    const t = s.querySelector('[data-testid=status-tracker]');
    return !!t && /queue:\\s*\\d+\\s*\\/\\s*\\d*/.test(t.textContent);
  };
  const show = () => {
    const s = document.querySelector('#status');
    if (!s) return;
    const waiting = queued(s);
    if (waiting && since === null) since = Date.now();
    if (!waiting) since = null;
    if (s.classList.contains('sv-waiting') !== waiting) s.classList.toggle('sv-waiting', waiting);
    let line = s.querySelector(':scope > .sv-wait');
    if (!waiting) {
      if (line) line.remove();
      if (clock) { clearInterval(clock); clock = null; }
      return;
    }
    if (!line) { line = document.createElement('div'); line.className = 'sv-wait sv-status'; s.appendChild(line); }
    const words = %(words)s;
    if (line.textContent !== words) line.textContent = words;
    if (!clock) clock = setInterval(show, 250);          // the seconds count while nothing else changes
  };
  const watch = () => {
    const s = document.querySelector('#status');
    if (!s) { setTimeout(watch, 200); return; }
    new MutationObserver(show).observe(s, {childList: true, subtree: true, characterData: true});
    show();
  };
  watch();
}
""" % dict(words="`" + WAIT_WORDS.replace("{s}", "${Math.floor((Date.now() - since) / 1000)}") + "`")


# -- the served app as a child process ------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, from /proc/<pid>/stat (Linux)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    utime, stime = stat.rsplit(")", 1)[1].split()[11:13]          # fields 14 and 15; the name may hold spaces
    return (int(utime) + int(stime)) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def served_app(*args: str, timeout: float = 180.0, log_path: str | os.PathLike | None = None) -> Iterator[tuple]:
    """Start `python app.py --port <free> *args` from the repository root; yield (process, url) once it answers
    HTTP, and stop it afterwards. Its output goes to `log_path` (default: discarded)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    out = open(log_path, "wb") if log_path else subprocess.DEVNULL       # closed in `finally`
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port), *args], cwd=ROOT,
                            stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"app.py exited with code {proc.returncode} before serving"
                                   + (f" (log: {log_path})" if log_path else ""))
            try:
                with urllib.request.urlopen(url, timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"app.py did not serve {url} within {timeout:.0f} s") from None
                time.sleep(0.25)
        yield proc, url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log_path:
            out.close()


# -- long-running use (scripts/soak.py) -------------------------------------------------------------------------------
def cache_rule() -> tuple[int, int]:
    """Gradio's delete_cache for the app: every `age / 4` seconds, the app's temp files older than `age` are deleted;
    age 3600 s, or SPECVIZ_CACHE_AGE_S (the soak shortens it so that pruning happens within the soak; core/owned.py
    prunes the app's own export folders by the same age)."""
    age = int(owned.max_age_s())
    return max(1, age // 4), age


def trace_memory_if_asked() -> None:
    """With SPECVIZ_TRACEMALLOC=gc: on SIGUSR1, write the live Python objects' counts by type to
    SPECVIZ_TRACEMALLOC_FILE, then `<file>.done` (scripts/soak.py reads them); with SPECVIZ_TRACEMALLOC=1 also trace
    allocations (8 frames deep) and write a snapshot beside it (pickled). Off by default: tracing slows every
    allocation (a soak run ~3x here)."""
    mode = os.environ.get("SPECVIZ_TRACEMALLOC")
    if mode not in ("1", "gc"):
        return
    # the memory probes load only when SPECVIZ_TRACEMALLOC asks for them
    import gc
    import json
    import pickle
    import signal
    import tracemalloc
    from collections import Counter
    if mode == "1":
        tracemalloc.start(8)
    out = Path(os.environ.get("SPECVIZ_TRACEMALLOC_FILE") or "specviz-tracemalloc.json")
    dumps = []

    def dump(*_):
        gc.collect()
        dumps.append(1)
        path = None
        if tracemalloc.is_tracing():
            snap = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
            path = out.with_name(f"{out.stem}-{len(dumps)}.pickle")
            path.write_bytes(pickle.dumps(snap))
        types = Counter(type(o).__name__ for o in gc.get_objects())
        out.write_text(json.dumps({"snapshot": path and str(path), "types": dict(types), "objects": sum(types.values()),
                                   "traced_mb": tracemalloc.get_traced_memory()[0] / 2 ** 20}))
        out.with_suffix(".done").write_text("")
    signal.signal(signal.SIGUSR1, dump)
