"""Mutation-check variants for the files the app owns (core/owned.py) and the URL's setting (app/link.py);
protocol: tests/support/mutants.py."""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from specviz.app import link
from specviz.core import owned
from tests.app.test_link import (
    test_no_setting_no_run,
    test_out_of_range_numbers_are_clamped_with_the_typed_value_s_line,
)
from tests.support.mutants import Mutant


class _Env:
    """GRADIO_TEMP_DIR and SPECVIZ_CACHE_AGE_S set for a detector (no fixtures in detectors), restored after."""

    def __init__(self, base: Path, age: str):
        self.set = {"GRADIO_TEMP_DIR": str(base), "SPECVIZ_CACHE_AGE_S": age}

    def __enter__(self):
        self.old = {k: os.environ.get(k) for k in self.set}
        os.environ.update(self.set)

    def __exit__(self, *exc):
        for k, v in self.old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def _theirs(base: Path) -> Path:
    d = base / "specviz-my-experiments"
    d.mkdir(parents=True)
    (d / "results.csv").write_text("a,b\n")
    old = time.time() - 7200
    os.utime(d, (old, old))
    return d


def bystander_survives_exports():
    from specviz.render.exports import export_dir
    tmp = Path(tempfile.mkdtemp())
    try:
        theirs = _theirs(tmp)
        with _Env(tmp, "0"):
            first = export_dir()
            time.sleep(0.01)
            export_dir()
        assert (theirs / "results.csv").exists(), "a folder the app did not make was deleted"
        assert not first.exists(), "the app's own old export was kept"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def a_fresh_export_survives_the_next():
    """An export made a moment ago is still there after the next one (the browser may not have fetched it yet)."""
    from specviz.render.exports import export_dir
    tmp = Path(tempfile.mkdtemp())
    try:
        with _Env(tmp, "3600"):
            first = export_dir()
            time.sleep(0.01)
            export_dir()
        assert first.exists(), "a fresh export was pruned"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _prune_by_name(max_age=None):
    """Wrong (the old rule): every specviz-* folder in the temp dir older than the age."""
    base = Path(os.environ.get("GRADIO_TEMP_DIR") or tempfile.gettempdir())
    limit = owned.max_age_s() if max_age is None else max_age
    for old in base.glob("specviz-*"):
        if old.is_dir() and time.time() - old.stat().st_mtime > limit:
            shutil.rmtree(old, ignore_errors=True)
    return 0


def _clamp_to_valid_range(k, raw, notes):
    """Wrong: a link's number clamped to the knob's valid range (λ has no upper end), not to its control's."""
    v = float(raw)
    lo, hi = k.lo if k.lo is not None else -1e9, k.hi if k.hi is not None else 1e9
    return min(max(v, lo), hi)


VARIANTS = [
    Mutant("owned: pruning by a name pattern in the shared temp dir",
           lambda mp: (mp.setattr(owned, "prune", _prune_by_name),
                       mp.setattr(owned, "new_folder", lambda: (_prune_by_name(), Path(tempfile.mkdtemp(
                           prefix="specviz-", dir=os.environ["GRADIO_TEMP_DIR"])))[1])),
           (bystander_survives_exports,)),
    Mutant("owned: every recorded folder removed at each export, whatever its age",
           lambda mp: mp.setattr(owned, "max_age_s", lambda: 0.0),
           (a_fresh_export_survives_the_next,)),
    Mutant("link: numbers clamped to the knob's valid range, not to its control's",
           lambda mp: mp.setattr(link, "_knob", _clamp_to_valid_range),
           (test_out_of_range_numbers_are_clamped_with_the_typed_value_s_line,)),
    Mutant("link: a link without a setting still runs",
           lambda mp: mp.setattr(link, "loader", lambda models: lambda inputs: link.read(
               dict(inputs["request"].query_params), models)[0]),
           (test_no_setting_no_run,)),
]
