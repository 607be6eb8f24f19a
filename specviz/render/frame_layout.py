"""Where the lanes sit in a race frame (the video's and the Replay tab's picture): a regular grid of equal lanes, each
with its caption — the lane's name and its wrapped caption lines, never cut — above the image or beside it,
whichever gives the larger lanes (a tie: beside, which fills a 16:9 frame's width and height instead of leaving a
band empty). Captions are wrapped at " · " between their parts, then between words."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from specviz.render import draw

SIZE = (1280, 720)                  # 16:9
HEADER, GAP = 92, 16                # px: settings band, gaps
NAME_H = 30                         # px: the name line
SUB_PX = (20, 16)                   # px: caption font sizes, the larger preferred (a line is 4 px taller)
SIDE = 330                          # px: a caption column beside its lane


@dataclass(frozen=True)
class LaneBox:
    """Where one lane sits in a frame: its image's top-left corner and width (px: the panel size draw.upscale is
    given), and its caption's top-left corner and width."""
    x: int
    y: int
    px: int
    tx: int = 0
    ty: int = 0
    tw: int = 0
    font: int = SUB_PX[0]           # the caption lines' font size

    @property
    def line_h(self) -> int:
        return self.font + 4


def label_h(lines: int, size: int = SUB_PX[0]) -> int:
    """A caption's height: the name and `lines` caption lines of font `size` (58 px for one at 20 px)."""
    return NAME_H + lines * (size + 4) + 4


@lru_cache(maxsize=1024)
def wrap(text: str, width: int, size: int = SUB_PX[0]) -> tuple[str, ...]:
    """`text` in lines no wider than `width` px: its " · " parts joined while they fit, a part too long for one line
    broken between words (a single word wider than the line stays whole)."""
    f, lines = draw.font(size), []
    for part in text.split(" · "):
        if lines and f.getlength(f"{lines[-1]} · {part}") <= width:
            lines[-1] = f"{lines[-1]} · {part}"
            continue
        cur = ""
        for word in part.split(" "):
            if cur and f.getlength(f"{cur} {word}") > width:
                lines.append(cur)
                cur = word
            else:
                cur = f"{cur} {word}" if cur else word
        lines.append(cur)
    return tuple(lines)


def lines_needed(captions: tuple, width: int, size: int = SUB_PX[0]) -> int:
    return max((len(wrap(c, width, size)) for c in captions), default=1)


def lane_boxes(n: int, grid, size=SIZE, captions: tuple | None = None) -> list[LaneBox]:
    """A regular grid of n equal lanes, the column count and the caption's place chosen for the largest lanes whose
    captions (one text per lane, the longest the film shows; None: one line each) fit whole."""
    return list(_boxes(n, tuple(grid), tuple(size), captions))


@lru_cache(maxsize=64)
def _boxes(n: int, grid: tuple, size: tuple, captions: tuple | None) -> tuple:
    w, h = size
    gh, gw = grid
    caps = captions or ("",) * n
    best = None
    for cols in range(1, n + 1):
        rows = math.ceil(n / cols)
        for side in (False, True):
            for size in SUB_PX:
                room = (w - (cols + 1) * GAP - (cols * (SIDE + GAP) if side else 0)) // cols // gw
                cell, lines = room, 1
                while cell > 1:
                    lines = lines_needed(caps, SIDE if side else cell * gw, size)
                    if side:
                        fits = label_h(lines, size) <= cell * gh and HEADER + rows * (cell * gh + GAP) + GAP <= h
                    else:
                        fits = HEADER + rows * (cell * gh + label_h(lines, size) + GAP) <= h
                    if fits:
                        break
                    cell -= 1
                key = (max(1, cell), size, side, -cols)
                if best is None or key > best[0]:
                    best = (key, cols, rows, lines)
    (cell, size, side, _), cols, rows, lines = best
    px, ph = cell * gw, cell * gh
    lab = 0 if side else label_h(lines, size)
    bw = px + (SIDE + GAP if side else 0)                                  # a lane's width with its caption
    x0 = (w - cols * bw - (cols - 1) * GAP) // 2
    y0 = HEADER + (h - HEADER - rows * (ph + lab + GAP)) // 2               # the lane block centred below the header
    boxes = []
    for i in range(n):
        r, c = divmod(i, cols)
        x, y = x0 + c * (bw + GAP), y0 + r * (ph + lab + GAP) + lab
        boxes.append(LaneBox(x, y, px, x + px + GAP, y, SIDE, size) if side else
                     LaneBox(x, y, px, x, y - lab, px, size))
    return tuple(boxes)


def fit_size(n: int, grid, width: int = SIZE[0], captions: tuple | None = None) -> tuple[int, int]:
    """A frame `width` px wide whose height just holds n lanes in rows of up to five, captions above (the app's
    replay picture: no empty bands, so the lanes are as large as the page's width allows)."""
    cols = min(max(1, n), 5)
    rows = math.ceil(max(1, n) / cols)
    px = (width - (cols + 1) * GAP) // cols
    ph = px // grid[1] * grid[0]
    lines = lines_needed(captions or ("",), px // grid[1] * grid[1])
    return width, HEADER + rows * (ph + label_h(lines) + GAP) + GAP       # at the larger font: lane_boxes keeps it
