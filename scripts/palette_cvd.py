"""Print the smallest CIEDE2000 between two colours of each categorical map (its "none / undecided" grey included),
in normal vision and under simulated deuteranopia, protanopia and tritanopia (colorspacious, severity 100):
    python scripts/palette_cvd.py"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from specviz.render import draw  # noqa: E402  (the repo root on the path first)
from tests.support.colour import SIMULATIONS, closest_pair  # noqa: E402


def main() -> None:
    print("| map | " + " | ".join(SIMULATIONS) + " |")
    print("|---" * (len(SIMULATIONS) + 1) + "|")
    for name, colours in draw.categorical_palettes().items():
        cells = []
        for sim in SIMULATIONS.values():
            d, i, j = closest_pair(colours, sim)
            cells.append(f"{d:.1f} ({colours[i]} / {colours[j]})")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
