"""Downloads for a finished comparison: each method's image (PNG), its trace (JSON), the heatmap composites and a
slide figure (PNG and PDF), written into a fresh, uniquely named folder under the app's temp dir."""
from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

from specviz.core.paths import slug
from specviz.render import draw, figures, panels

MAX_AGE_S = 3600                    # export folders older than this are deleted when a new one is made


def export_dir(root: str | Path | None = None) -> Path:
    """A new folder specviz-<uuid> under `root` (default: $GRADIO_TEMP_DIR, else the system temp dir); older export
    folders there are deleted first (the browser already holds its own copies)."""
    base = Path(root or os.environ.get("GRADIO_TEMP_DIR") or tempfile.gettempdir())
    prune(base)
    out = base / f"specviz-{uuid.uuid4().hex[:12]}"
    out.mkdir(parents=True, exist_ok=False)
    return out


def prune(base: Path, max_age: float = MAX_AGE_S) -> None:
    now = time.time()
    for old in base.glob("specviz-*"):
        try:
            if old.is_dir() and now - old.stat().st_mtime > max_age:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:                                 # another worker removed it first
            pass


def export_run(traces: dict, images: dict, prompt: str, root: str | Path | None = None) -> list[Path]:
    """Write every artefact of one run; returns the paths (slide figure first, then images, traces, maps)."""
    out = export_dir(root)
    stem = slug(prompt)
    fig = figures.slide_figure(traces, images, prompt)
    paths = [figures.save(fig, out / f"{stem}_figure.pdf"), figures.save(fig, out / f"{stem}_figure.png")]
    for m, t in traces.items():
        p = out / f"{stem}_{m}.png"
        draw.upscale(images[m], t.grid, 480).save(p)
        paths.append(p)
    for m, t in traces.items():
        p = out / f"{stem}_{m}_trace.json"
        t.save(p)
        paths.append(p)
    for kind in panels.KINDS:
        p = out / f"{stem}_map_{kind}.png"
        panels.heatmap(kind, traces, images).save(p)
        paths.append(p)
    return paths
