"""Where the embedded model's files are: assets/ of a source checkout (also what an editable install uses), or the
copy that a regular `pip install .` ships inside the package as specviz/_assets (pyproject.toml, package-data)."""
from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]                 # specviz/


def assets_dir() -> Path:
    shipped = PACKAGE / "_assets"
    return shipped if shipped.is_dir() else PACKAGE.parent / "assets"


def slug(text: str, n: int = 32) -> str:
    """A file-name piece from free text (lower case, dashes, at most n characters; "run" when nothing is left)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:n] or "run"
