"""A short soak of the served app (issue 26): ~20 consecutive runs through gradio_client (mixed methods and knobs,
slider previews, re-runs, exports, opened traces, a cancelled run) with no error, flat open file descriptors and the
temp dir bounded by the pruning rule. scripts/soak.py --runs 200 is the long version (README)."""
import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "soak.py"


@pytest.fixture(scope="module")
def soak():
    spec = importlib.util.spec_from_file_location("soak", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_short_soak(soak, tmp_path):
    every = soak.EVERY | {"export": 9, "open": 10}          # the export's videos are the dearest action
    res = soak.soak(20, threads=1, seed=1, cache_age=8, pool=("sjd", "mcsjd", "csd"),
                    log_path=str(tmp_path / "app.log"), progress=lambda line: None, every=every)
    rows, sm = res["rows"], res["summary"]
    print(soak.table(rows))
    print(sm)
    assert [r["errors"] for r in rows if r["errors"]] == []
    fds = [r["fds"] for r in rows[4:]]                       # after start-up (first page, first export, ...)
    assert max(fds) - min(fds) <= 2, f"open file descriptors grew: {fds}"
    assert sm["stale_files_max"] == 0, "files older than the pruning rule allows were left in the temp dir"
    # bounded: the last runs hold no more files than a few runs' worth, not everything ever written
    made = sum(max(0, b["temp_files"] - a["temp_files"]) for a, b in zip(rows, rows[1:]))
    assert rows[-1]["temp_files"] < made / 2


def test_cache_sweep_survives_concurrent_adds_and_keeps_rewritten_files(tmp_path):
    """widgets.SnapshotSet: Gradio's sweep iterates each component's temp-file set while handlers add to it, then
    drops what it deleted; an add during the sweep must not kill it, and a file written again must stay tracked."""
    import threading

    import app
    from specviz.app import widgets
    from tests.apptools import tiny_backend
    s = widgets.SnapshotSet(str(tmp_path / f"{i}.png") for i in range(2000))
    stop = threading.Event()

    def add():
        i = 0
        while not stop.is_set():
            s.add(f"new-{i}")
            i += 1
    t = threading.Thread(target=add)
    t.start()
    try:
        seen = sum(1 for _ in s for _ in range(50))          # slow iteration while the other thread adds
    finally:
        stop.set()
        t.join()
    assert seen >= 2000 * 50
    kept = tmp_path / "kept.png"
    kept.write_bytes(b"x")
    s |= {str(kept)}
    s -= {str(kept), str(tmp_path / "0.png")}
    assert str(kept) in s and str(tmp_path / "0.png") not in s
    demo = app.build_demo(tiny_backend()[0])
    image = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "img_ar")
    assert isinstance(image.temp_files, widgets.SnapshotSet)
    assert any(t is image.temp_files for t in demo.temp_file_sets)
    copy = type(image)(**{**image.constructor_args, "render": False})        # a session's copy after gr.skip()
    assert copy.temp_files is image.temp_files
