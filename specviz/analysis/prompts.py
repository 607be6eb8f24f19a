"""Prompt sets for the bench: the shipped public sets (assets/prompts/SOURCE.md: Parti-Prompts, LlamaGen's
MS-COCO captions), or a user's file: one prompt a line (.txt and anything else), or a column of a .tsv / .csv
(the column named `Prompt`, `prompt`, `caption` or `text`, else the first). `--shuffle SEED` permutes the set with
numpy's PCG64 (seeded) before `--limit N` keeps the first N: a seeded random subset, the same on every machine."""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from specviz.core.paths import assets_dir
from specviz.scenes import data


@dataclass(frozen=True)
class PromptSet:
    name: str
    file: str                 # under assets/prompts/
    count: int                # as the source states it
    source: str
    licence: str


SETS = {
    "parti": PromptSet("parti", "PartiPrompts.tsv", 1632, "google-research/parti PartiPrompts.tsv", "Apache-2.0"),
    "coco": PromptSet("coco", "coco_captions.csv", 30000, "FoundationVision/LlamaGen evaluations/t2i/coco_captions.csv",
                      "CC-BY-4.0 (COCO caption annotations)"),
}
COLUMNS = ("Prompt", "prompt", "caption", "text")


def read_file(path: Path | str, column: str | None = None) -> list[str]:
    """The prompts of a file (blank lines and cells skipped, surrounding whitespace stripped)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--prompts {path}: no such file (or use parti, coco, or a number of scenes captions)")
    if path.suffix.lower() not in (".tsv", ".csv"):
        return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    with path.open(newline="", encoding="utf-8") as f:
        rows = csv.DictReader(f, delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
        names = rows.fieldnames or []
        col = column or next((c for c in COLUMNS if c in names), names[0] if names else None)
        if col not in names:
            raise ValueError(f"--prompts {path}: no column {col!r} (columns: {', '.join(names) or 'none'})")
        return [r[col].strip() for r in rows if (r.get(col) or "").strip()]


def load(spec: str, limit: int | None = None, shuffle: int | None = None) -> list[str]:
    """'parti', 'coco' or a file path -> its prompts, shuffled by `shuffle` (a seed; None keeps the file's order),
    then the first `limit`."""
    found = SETS.get(spec)
    texts = read_file(assets_dir() / "prompts" / found.file if found else spec)
    return select(texts, limit, shuffle)


def select(texts: list[str], limit: int | None = None, shuffle: int | None = None) -> list[str]:
    if limit is not None and limit < 1:
        raise ValueError(f"--limit must be at least 1, got {limit}")
    if shuffle is not None:
        order = np.random.default_rng(shuffle).permutation(len(texts))
        texts = [texts[i] for i in order]
    return texts[:limit]


def for_scenes(texts: list[str]) -> tuple[list[tuple[str, list[int]]], list[str]]:
    """The embedded model says only its grammar (scenes.data.parse_prompt: known words -> the five caption fields,
    the others unspecified): (the prompts it can say, with their caption tokens; the prompts it refuses)."""
    kept, refused = [], []
    for t in texts:
        try:
            kept.append((t, data.parse_prompt(t)))
        except ValueError:
            refused.append(t)
    return kept, refused


def refusal_line(refused: list[str], total: int, shown: int = 5) -> str:
    """One line naming the refused prompts (the first `shown`; the JSON output lists them all)."""
    names = ", ".join(repr(t[:60]) for t in refused[:shown]) + (", ..." if len(refused) > shown else "")
    return (f"scenes: {len(refused)} of {total} prompts use no word of its grammar and are skipped: {names} "
            f"(the app refuses them the same way; --json lists them all)")
