"""Nothing the program did not make is touched: a folder named like ours (specviz-…) in the temp dir, old, survives
exports and the pruning age shortened to 0; the app's own old export folders are still pruned; a recorded folder
swapped for a link is not followed; a caller's own export root keeps everything; the process root goes at exit."""
import dataclasses
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from specviz.core import owned
from specviz.render.exports import export_dir

TWO_HOURS = 2 * 3600


def bystander(base: Path, name: str = "specviz-my-experiments") -> Path:
    """Somebody else's folder in the shared temp dir, named like ours, two hours old, with a file in it."""
    d = base / name
    d.mkdir(parents=True)
    (d / "results.csv").write_text("a,b\n1,2\n")
    old = time.time() - TWO_HOURS
    os.utime(d / "results.csv", (old, old))
    os.utime(d, (old, old))
    return d


def test_a_folder_named_like_ours_survives_exports_and_the_shortest_age(tmp_path, monkeypatch):
    base = tmp_path / "shared-tmp"
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(base))
    monkeypatch.setenv("SPECVIZ_CACHE_AGE_S", "0")
    theirs = bystander(base)
    first = export_dir()
    time.sleep(0.01)
    second = export_dir()                                  # age 0: the first (ours) is pruned now
    owned.prune(0)
    assert (theirs / "results.csv").read_text() == "a,b\n1,2\n"
    assert not first.exists(), "the app's own old export folder was not pruned"
    assert not second.exists()                             # pruned by the explicit prune(0)
    assert owned.root().is_dir() and owned.root().parent == base.resolve()


def test_the_app_s_own_folders_are_pruned_by_age_only(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "t"))
    monkeypatch.delenv("SPECVIZ_CACHE_AGE_S", raising=False)
    old, fresh = export_dir(), export_dir()
    with owned._LOCK:                                       # make `old` look two hours old in the record
        owned._MADE[:] = [dataclasses.replace(m, at=m.at - TWO_HOURS) if m.path == old else m
                          for m in owned._MADE]
    new = export_dir()
    assert not old.exists() and fresh.exists() and new.exists()


def test_a_recorded_folder_swapped_for_a_link_is_not_followed(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "t"))
    theirs = bystander(tmp_path / "elsewhere")
    ours = export_dir()
    shutil.rmtree(ours)
    ours.symlink_to(theirs, target_is_directory=True)       # the same name, now a link to somebody's folder
    owned.prune(0)
    assert (theirs / "results.csv").exists() and ours.is_symlink()


def test_a_recorded_folder_replaced_by_another_is_left(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "t"))
    ours = export_dir()
    shutil.rmtree(ours)
    ours.mkdir()                                            # a new folder (new inode) at the recorded path
    (ours / "theirs.txt").write_text("x")
    owned.prune(0)
    assert (ours / "theirs.txt").exists()


def test_a_caller_s_root_keeps_everything(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECVIZ_CACHE_AGE_S", "0")
    root = tmp_path / "mine"
    theirs = bystander(root, "specviz-old-run")
    a = export_dir(root)
    time.sleep(0.01)
    b = export_dir(root)
    owned.prune(0)
    assert a.exists() and b.exists() and (theirs / "results.csv").exists()
    assert a.parent == root and b.parent == root


def test_the_process_root_goes_at_exit_and_nothing_else(tmp_path):
    base = tmp_path / "shared-tmp"
    theirs = bystander(base)
    code = ("from specviz.render.exports import export_dir; d = export_dir(); (d / 'x.png').write_bytes(b'x'); "
            "print(d.parent)")
    env = dict(os.environ, GRADIO_TEMP_DIR=str(base), SPECVIZ_CACHE_AGE_S="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=Path(__file__).resolve().parents[2],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert Path(out).parent == base.resolve() and not Path(out).exists()
    assert sorted(p.name for p in base.iterdir()) == [theirs.name] and (theirs / "results.csv").exists()
