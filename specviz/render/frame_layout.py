"""Where the lanes sit in a race frame (the video's and the Replay tab's picture): a regular grid of equal lanes, each
with its caption — the lane's name (bold) and its caption lines, both wrapped, never cut — above the image or beside
it. Every arrangement is tried: columns 1..n, the caption above or beside (beside: every distinct wrap of the
captions, as narrow as its widest line), caption type from STYLES; the one with the largest lane pictures wins, a tie
going to the larger type, then to the one that covers more of the frame with lanes and their captions (`used`: the
16:9 frame's band left empty is the smallest these pictures allow), then to fewer columns.
Captions are wrapped at " · " between their parts, then between words."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from specviz.render import draw

SIZE = (1280, 720)                  # 16:9
HEADER, GAP = 92, 16                # px: settings band, gaps
STYLES = ((24, 20), (24, 16), (20, 16), (18, 14), (16, 14))   # (name, caption) font px, the larger preferred


@dataclass(frozen=True)
class LaneBox:
    """Where one lane sits in a frame: its image's top-left corner, width (px: the panel size draw.upscale is given)
    and height, and its caption's top-left corner, width and height, with its fonts."""
    x: int
    y: int
    px: int
    tx: int = 0
    ty: int = 0
    tw: int = 0
    font: int = STYLES[0][1]        # the caption lines' font size
    name_font: int = STYLES[0][0]   # the name's (bold)
    ph: int = 0
    th: int = 0

    @property
    def line_h(self) -> int:
        return self.font + 4

    @property
    def name_h(self) -> int:
        return self.name_font + 6

    @property
    def area(self) -> int:
        """px²: the lane's picture and caption block together (their bounding box)."""
        w, h = extent(self.px, self.ph, self.tw, self.th, self.tx > self.x)
        return w * h


def extent(px: int, ph: int, tw: int, th: int, side: bool) -> tuple[int, int]:
    """(width, height) of a lane with its caption block above (tw = px) or beside it."""
    return (px + GAP + tw, max(ph, th)) if side else (px, th + ph)


def used(boxes, size=SIZE) -> float:
    """The share of the frame the lanes and their captions cover."""
    return sum(b.area for b in boxes) / (size[0] * size[1])


@lru_cache(maxsize=4096)
def wrap(text: str, width: int, size: int = STYLES[0][1], bold: bool = False) -> tuple[str, ...]:
    """`text` in lines no wider than `width` px: its " · " parts joined while they fit, a part too long for one line
    broken between words (a single word wider than the line stays whole)."""
    f, lines = draw.font(size, bold), []
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


@lru_cache(maxsize=4096)
def block(names: tuple, captions: tuple, width: int, style=STYLES[0]) -> tuple[int, int]:
    """(height, widest line) px of the tallest lane caption wrapped at `width`: the name's lines, then the caption's.
    A widest line over `width` means some word does not fit."""
    name_px, sub_px = style
    fn, fs = draw.font(name_px, True), draw.font(sub_px)
    h = wide = 0
    for name, cap in zip(names, captions):
        nl, cl = wrap(name, width, name_px, True), wrap(cap, width, sub_px)
        wide = max([wide] + [fn.getlength(s) for s in nl] + [fs.getlength(s) for s in cl])
        h = max(h, len(nl) * (name_px + 6) + len(cl) * (sub_px + 4) + 4)
    return h, math.ceil(wide)


def side_blocks(names: tuple, captions: tuple, width: int, style) -> list[tuple[int, int]]:
    """Every distinct wrap of the captions no wider than `width`, as (height, widest line): the next narrower wrap
    starts just under the current one's widest line (any width from that line up wraps the same)."""
    out = []
    h, wide = block(names, captions, width, style)
    while wide <= width and width > 0:
        out.append((h, wide))
        width = wide - 1
        h, wide = block(names, captions, width, style)
    return out


def lane_boxes(n: int, grid, size=SIZE, captions: tuple | None = None, names: tuple | None = None) -> list[LaneBox]:
    """A regular grid of n equal lanes with the largest pictures whose captions (one text per lane, the longest the
    film shows; None: one line each) and names (None: none, one line kept) fit whole (the module's doc)."""
    return list(_boxes(n, tuple(grid), tuple(size), tuple(captions or ("",) * n), tuple(names or ("",) * n)))


def candidates(n: int, grid: tuple, size: tuple, caps: tuple, names: tuple):
    """Every arrangement's (cell, used px², cols, side, style, tw, th): for each, the largest cell that fits."""
    (w, h), (gh, gw) = size, grid
    room_h = h - HEADER - GAP                                               # the lane block's height (bottom margin)
    for cols in range(1, n + 1):
        rows = math.ceil(n / cols)
        row_h = (room_h - (rows - 1) * GAP) // rows
        lane_w = (w - (cols + 1) * GAP) // cols
        for style in STYLES:
            for th, tw in side_blocks(names, caps, lane_w - GAP - gw, style):
                cell = min((lane_w - GAP - tw) // gw, row_h // gh)
                if cell >= 1 and th <= row_h:
                    yield cell, n * math.prod(extent(cell * gw, cell * gh, tw, th, True)), cols, True, style, tw, th
            for cell in range(min(lane_w // gw, row_h // gh), 0, -1):
                th, wide = block(names, caps, cell * gw, style)
                if wide <= cell * gw and cell * gh + th <= row_h:
                    yield cell, n * math.prod(extent(cell * gw, cell * gh, cell * gw, th, False)), cols, False, \
                        style, cell * gw, th
                    break


@lru_cache(maxsize=64)
def _boxes(n: int, grid: tuple, size: tuple, caps: tuple, names: tuple) -> tuple:
    (w, h), (gh, gw) = size, grid
    found = list(candidates(n, grid, size, caps, names))
    if not found:                                                           # nothing fits whole: the smallest lanes
        found = [(1, 0, n, False, STYLES[-1], gw, block(names, caps, gw, STYLES[-1])[0])]
    cell, _, cols, side, style, tw, th = max(found, key=lambda c: (c[0], -STYLES.index(c[4]), c[1], -c[2]))
    rows = math.ceil(n / cols)
    px, ph = cell * gw, cell * gh
    bw, bh = extent(px, ph, tw, th, side)
    x0 = (w - cols * bw - (cols - 1) * GAP) // 2
    y0 = HEADER + (h - HEADER - rows * bh - (rows - 1) * GAP) // 2          # the lane block centred below the header
    boxes = []
    for i in range(n):
        r, c = divmod(i, cols)
        x, y = x0 + c * (bw + GAP), y0 + r * (bh + GAP)
        boxes.append(LaneBox(x, y, px, x + px + GAP, y, tw, style[1], style[0], ph, th) if side else
                     LaneBox(x, y + th, px, x, y, px, style[1], style[0], ph, th))
    return tuple(boxes)


def fit_size(n: int, grid, width: int = SIZE[0], captions: tuple | None = None,
             names: tuple | None = None) -> tuple[int, int]:
    """A frame `width` px wide whose height just holds n lanes in rows of up to five, captions above at the largest
    style (the app's replay picture: no empty bands, so the lanes are as large as the page's width allows)."""
    n = max(1, n)
    cols = min(n, 5)
    rows = math.ceil(n / cols)
    px = (width - (cols + 1) * GAP) // cols // grid[1] * grid[1]
    th = block(tuple(names or ("",) * n), tuple(captions or ("",) * n), px)[0]
    return width, HEADER + rows * (px // grid[1] * grid[0] + th + GAP) + GAP
