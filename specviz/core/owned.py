"""Folders this process made, and only those: the app's exports live under one root folder that the process created
for itself (a fresh `mkdtemp` under $GRADIO_TEMP_DIR, else the system temp dir); every folder made there is recorded
(path, device, inode, time) and marked with a random token in a `.specviz-owned` file; pruning removes
recorded folders only, whose mark still carries their token — never a folder found by its name in a shared
directory, never through a link, never one whose inode is no longer the one recorded. At exit the process removes its
own roots (only in the process that made them: a forked child does not)."""
from __future__ import annotations

import atexit
import os
import secrets
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

MARK = ".specviz-owned"                                 # inside every made folder: the token recorded for it


@dataclass(frozen=True)
class Made:
    path: Path
    dev: int
    ino: int
    at: float                                           # time.time() when it was made
    token: str                                          # what its MARK file says


_LOCK = threading.Lock()
_MADE: list[Made] = []                                  # prunable folders under the root, oldest first
_ROOTS: dict[Path, Made] = {}                          # temp dir -> this process's root in it
_PID = {"pid": os.getpid()}                             # the process whose roots these are


def max_age_s() -> float:
    """Seconds a made folder is kept: 3600, or SPECVIZ_CACHE_AGE_S (the soak shortens it; Gradio's own cache rule,
    app/serving.cache_rule, reads the same variable)."""
    return float(os.environ.get("SPECVIZ_CACHE_AGE_S") or 3600)


def _record(path: Path) -> Made:
    token = secrets.token_hex(16)
    (path / MARK).write_text(token)
    st = os.lstat(path)
    return Made(path, st.st_dev, st.st_ino, time.time(), token)


def root() -> Path:
    """This process's root folder in the temp dir ($GRADIO_TEMP_DIR, else the system's): made on first use, removed
    at exit."""
    base = Path(os.environ.get("GRADIO_TEMP_DIR") or tempfile.gettempdir()).resolve()
    with _LOCK:
        made = _ROOTS.get(base)
        if made is None or not _still(made):
            base.mkdir(parents=True, exist_ok=True)
            made = _ROOTS[base] = _record(Path(tempfile.mkdtemp(prefix="specviz-app-", dir=base)))
        return made.path


def new_folder() -> Path:
    """A fresh folder under this process's root, recorded; recorded folders older than max_age_s() go first."""
    prune()
    path = Path(tempfile.mkdtemp(prefix="specviz-", dir=root()))
    with _LOCK:
        _MADE.append(_record(path))
    return path


def _still(made: Made) -> bool:
    """The recorded folder is still there, still a folder (not a link), the same inode, and its mark still carries
    the recorded token (an inode number can be reused by a folder somebody else made at the same path)."""
    try:
        st = os.lstat(made.path)
        if not os.path.isdir(made.path) or os.path.islink(made.path) or (st.st_dev, st.st_ino) != (made.dev, made.ino):
            return False
        mark = made.path / MARK
        return not mark.is_symlink() and mark.read_text() == made.token
    except (OSError, UnicodeDecodeError):
        return False


def prune(max_age: float | None = None) -> int:
    """Remove the recorded folders older than max_age (default max_age_s()); returns how many were removed."""
    limit, now, gone = max_age_s() if max_age is None else max_age, time.time(), 0
    with _LOCK:
        old = [m for m in _MADE if now - m.at > limit]
        _MADE[:] = [m for m in _MADE if now - m.at <= limit]
    for m in old:
        if _still(m):
            shutil.rmtree(m.path, ignore_errors=True)   # rmtree does not follow links inside the folder
            gone += 1
    return gone


def _remove_roots() -> None:
    if os.getpid() != _PID["pid"]:                      # a forked child: the roots are its parent's
        return
    for made in list(_ROOTS.values()):
        if _still(made):
            shutil.rmtree(made.path, ignore_errors=True)


atexit.register(_remove_roots)
