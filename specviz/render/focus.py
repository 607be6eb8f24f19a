"""The inspected cell, outlined in every picture that shows it (so the audience sees the same token in every
lane and every map). The ring has two colours — RING_IN on the cell's own edge, RING_OUT just outside it — so it reads
on any colour of image or map; each band is `ring_px(c)` wide for a cell of c pixels."""
from __future__ import annotations

from PIL import Image, ImageDraw

RING_IN, RING_OUT = (255, 255, 255), (255, 0, 200)      # white inside the cell's edge, magenta around it


def ring_px(c: int) -> int:
    """Width of each band of the ring for cells of c px (2 px at the race's 15 px cells)."""
    return max(1, c // 7)


def cell_box(pos: int, grid, c: int) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1), inclusive, of raster position `pos` in an image of c-pixel cells."""
    r, col = divmod(pos, grid[1])
    return col * c, r * c, col * c + c - 1, r * c + c - 1


def outline(img: Image.Image, pos: int, grid) -> Image.Image:
    """A copy of the grid picture `img` (cells of img.width // grid[1] px) with position `pos` ringed."""
    out = img.convert("RGB").copy()
    c = out.size[0] // grid[1]
    w = ring_px(c)
    x0, y0, x1, y1 = cell_box(pos, grid, c)
    d = ImageDraw.Draw(out)
    d.rectangle((x0 - w, y0 - w, x1 + w, y1 + w), outline=RING_OUT, width=w)
    d.rectangle((x0, y0, x1, y1), outline=RING_IN, width=w)
    return out
