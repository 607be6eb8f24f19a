"""The race video's frame layout, measured: for 1..10 lanes (the methods' labels as names), plain and keyed captions
(the last frame's, the longest), the lanes' picture size, the caption's place and type, and the share of the 16:9
frame left empty (1 - lanes and their caption blocks / frame area). Prints a Markdown table and one JSON line.

    python scripts/video_layout.py [--grid 16]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specviz.analysis.cards import cards  # noqa: E402
from specviz.render import frame_layout as fl  # noqa: E402

METHODS = ("ar", "sjd", "csd", "gsd", "sd", "cascade", "lantern", "lanternpp", "mcsjd", "sjdpac")
CAPTIONS = {"plain": "done at forward 144 · 2.25× step compression",
            "keyed": "done at forward 144 · 2.25× step compression · 12 tokens changed vs AR"}


def measure(n: int, grid, caption: str) -> dict:
    names = tuple(cards().of(m).label for m in METHODS[:n])
    boxes = fl.lane_boxes(n, grid, captions=(caption,) * n, names=names)
    b = boxes[0]
    return {"lanes": n, "px": b.px, "caption": "beside" if b.tx > b.x else "above", "fonts": [b.name_font, b.font],
            "empty": round(1 - fl.used(boxes), 3)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", type=int, default=16)
    grid = (ap.parse_args().grid,) * 2
    rows = {kind: [measure(n, grid, cap) for n in range(1, 11)] for kind, cap in CAPTIONS.items()}
    print(f"| lanes ({grid[0]}x{grid[1]}) | plain: picture, caption, empty | keyed: picture, caption, empty |")
    print("|---|---|---|")
    for p, k in zip(rows["plain"], rows["keyed"]):
        print(f"| {p['lanes']} | " + " | ".join(f"{r['px']} px, {r['caption']} ({r['fonts'][0]}/{r['fonts'][1]} px), "
                                              f"{100 * r['empty']:.0f} %" for r in (p, k)) + " |")
    print(json.dumps({"grid": grid, **rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
