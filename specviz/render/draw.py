"""Arrays -> images (docs/design.md §8.5): colour-map lookups, nearest-neighbour upscaling, undecided-cell hatching,
overlays, CASCADE group marks, legends and side-by-side composites. Takes numpy arrays and PIL images, returns
PIL images; never imports a model and never uses pyplot (matplotlib only for its colour tables and font)."""
from __future__ import annotations

import math
import os
from functools import lru_cache

import matplotlib
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from specviz.core.records import DECISIONS, TARGET_SAMPLED

PANEL = 240                                   # px of one upscaled grid image
MARGIN, TITLE, GAP, COLS = 12, 60, 14, 4      # composite layout (TITLE: two lines above each panel)
TEXT, HEAD = 22, 24                           # px of labels / panel titles in pictures: >= 16 CSS px when a map is
#                                               shown at >= 80 % of its natural width (a 1080p projector)
NAN_RGB = (226, 228, 232)
UNDECIDED_RGB, HATCH_RGB = (44, 48, 58), (88, 95, 110)
# Categorical palettes: any two colours of one map (its NAN_RGB too) >= 20 CIEDE2000 apart, also under simulated
# deuteranopia, protanopia and tritanopia (tests/render/test_palette_cvd.py); decisions: green, yellow, rose, sky, plum
DECISION_RGB = {"exact": (0, 90, 30), "relaxed": (240, 200, 0), "rejected": (240, 80, 120),
                "resampled": (60, 160, 240), "bonus": (120, 40, 120), "ar": (0, 0, 0)}
DECISION_LABEL = {"exact": "accepted exactly", "relaxed": "accepted by relaxation", "rejected": "rejected draft",
                  "resampled": "resampled after rejection", "bonus": "bonus token", "ar": "plain AR sample"}
GROUP_RGB = ((0, 0, 0), (0, 100, 60), (230, 159, 0), (120, 40, 140))          # black, green, orange, purple
GROUP_LABEL = ("judged, no group", "interchangeable I(n)", "convergent C(n)", "both I and C")
# the "changed vs AR" map (analysis/paired.py SAME, FIRST, DOWNSTREAM)
CHANGED_RGB = ((0, 0, 0), (170, 51, 119), (230, 159, 0))                       # black, magenta-red, orange
CHANGED_LABEL = ("same token as AR", "first departure from AR", "changed downstream of it")
DIFF_RGB = ((60, 160, 240), (150, 30, 20))      # History -> Compare: sky blue the same decision, dark red not


def categorical_palettes() -> dict:
    """Each categorical map's colours with its "none / undecided" grey (NAN_RGB), read from the constants."""
    return {"decisions": (*(DECISION_RGB[d] for d in DECISIONS), NAN_RGB), "groups": (*GROUP_RGB, NAN_RGB),
            "changed vs AR": (*CHANGED_RGB, NAN_RGB), "history compare": (*DIFF_RGB, NAN_RGB)}


@lru_cache(maxsize=16)
def font(size: int = 13, bold: bool = False) -> ImageFont.FreeTypeFont:
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return ImageFont.truetype(os.path.join(matplotlib.get_data_path(), "fonts", "ttf", name), size)


@lru_cache(maxsize=16)
def lut(name: str) -> np.ndarray:
    """(256, 3) uint8 colour table of a matplotlib colormap (no pyplot)."""
    return (matplotlib.colormaps[name](np.linspace(0, 1, 256))[:, :3] * 255).round().astype(np.uint8)


def colorize(a: np.ndarray, cmap: str, vmin: float, vmax: float) -> np.ndarray:
    """(H, W) float -> (H, W, 3) uint8 through the colour table; NaN -> light grey."""
    t = (np.nan_to_num(a, nan=vmin) - vmin) / max(vmax - vmin, 1e-12)
    rgb = lut(cmap)[(np.clip(t, 0, 1) * 255).round().astype(int)]
    rgb[~np.isfinite(a)] = NAN_RGB
    return rgb


def categorical(idx: np.ndarray, colours) -> np.ndarray:
    """(H, W) float category index (NaN = none) -> (H, W, 3) uint8."""
    pal = np.array(list(colours) + [NAN_RGB], np.uint8)
    return pal[np.where(np.isfinite(idx), idx, len(pal) - 1).astype(int)]


def cell_px(grid, px: int = PANEL) -> int:
    return max(1, px // grid[1])


def upscale(img, grid, px: int = PANEL) -> Image.Image:
    """Nearest-neighbour upscale so every grid cell is an integer square of pixels (crisp token grids)."""
    im = img if isinstance(img, Image.Image) else Image.fromarray(np.asarray(img, np.uint8))
    c = cell_px(grid, px)
    return im.convert("RGB").resize((c * grid[1], c * grid[0]), Image.NEAREST)


def hatch(img: Image.Image, undecided: np.ndarray) -> Image.Image:
    """Paint undecided cells ((H, W) bool) dark with diagonal hatching, so a partial image reads at a glance."""
    if not undecided.any():
        return img
    a = np.array(img)
    c = a.shape[0] // undecided.shape[0]
    m = np.repeat(np.repeat(undecided, c, 0), c, 1)
    a[m] = _hatch_pattern(a.shape[0], a.shape[1])[m]
    return Image.fromarray(a)


@lru_cache(maxsize=8)
def _hatch_pattern(h: int, w: int) -> np.ndarray:
    yy, xx = np.mgrid[0:h, 0:w]
    return np.where(((xx + yy) % 8 < 2)[..., None], HATCH_RGB, UNDECIDED_RGB).astype(np.uint8)


def blend(top: Image.Image, base: Image.Image | None, opacity: float) -> Image.Image:
    """The map at `opacity` over the image (opacity 1 = the map alone)."""
    if base is None or opacity >= 1:
        return top
    return Image.blend(base.convert("RGB").resize(top.size, Image.NEAREST), top, float(max(0.0, opacity)))


def _centre(pos: int, grid, c: int) -> tuple[float, float]:
    r, col = divmod(pos, grid[1])
    return col * c + c / 2, r * c + c / 2


def mark_dots(img: Image.Image, cells, grid, colour=(255, 255, 255), frac: float = 0.18) -> Image.Image:
    """Small dots at the centres of the given positions (e.g. 'this cell saw a rejected draft')."""
    d = ImageDraw.Draw(img)
    c = img.size[0] // grid[1]
    r = max(2.0, c * frac)
    for pos in cells:
        x, y = _centre(pos, grid, c)
        d.ellipse((x - r, y - r, x + r, y + r), fill=colour, outline=(20, 20, 20))
    return img


def draw_groups(img: Image.Image, cells, grid) -> Image.Image:
    """CASCADE groups on the grid: member counts written in each cell, a link to the next position where the
    branches converge (C(n)), and a white ring where the acceptance needed the relaxation."""
    d = ImageDraw.Draw(img)
    c = img.size[0] // grid[1]
    f = font(max(8, int(c * 0.5)), bold=True)
    n = grid[0] * grid[1]
    for g in cells:
        x, y = _centre(g.pos, grid, c)
        if g.convergent and g.pos + 1 < n:                   # link along the bottom edge to the next position
            ly = y + c * 0.32
            x2 = _centre(g.pos + 1, grid, c)[0] if (g.pos + 1) % grid[1] else x + c / 2
            d.line((x, ly, x2, ly), fill=(255, 230, 200), width=max(1, c // 8))
        k = g.members
        if g.relaxed:
            r = c * 0.42
            d.ellipse((x - r, y - r, x + r, y + r), outline=(255, 255, 255), width=max(1, c // 10))
        if k:
            d.text((x, y - c * 0.05), str(k), fill=(255, 255, 255), font=f, anchor="mm", stroke_width=1,
                   stroke_fill=(30, 30, 30))
    return img


def draw_replay(img: Image.Image, events, drafted, grid) -> Image.Image:
    """One verification step on the grid: drafted cells outlined, judged cells framed in their decision colour,
    rejected cells crossed, resampled / bonus cells filled with a corner tag."""
    d = ImageDraw.Draw(img)
    c = img.size[0] // grid[1]
    w = max(2, c // 7)
    for pos in set(drafted):
        x0, y0 = _cell(pos, grid, c)
        d.rectangle((x0 + 1, y0 + 1, x0 + c - 2, y0 + c - 2), outline=(235, 235, 235), width=1)
    for ev in sorted(events, key=lambda e: e.decision != "rejected"):
        x0, y0 = _cell(ev.pos, grid, c)
        rgb = DECISION_RGB[ev.decision]
        if ev.decision == "rejected":
            d.line((x0 + w, y0 + w, x0 + c - w, y0 + c - w), fill=rgb, width=w)
            d.line((x0 + w, y0 + c - w, x0 + c - w, y0 + w), fill=rgb, width=w)
        else:
            d.rectangle((x0 + w // 2, y0 + w // 2, x0 + c - 1 - w // 2, y0 + c - 1 - w // 2), outline=rgb, width=w)
        if ev.decision in TARGET_SAMPLED:
            d.polygon([(x0, y0), (x0 + c // 2, y0), (x0, y0 + c // 2)], fill=rgb)
    return img


def _cell(pos: int, grid, c: int) -> tuple[int, int]:
    r, col = divmod(pos, grid[1])
    return col * c, r * c


# ---------------------------------------------------------------------------------------------------- legends
@lru_cache(maxsize=64)
def colorbar(cmap: str, vmin: float, vmax: float, label: str, height: int | None = None) -> Image.Image:
    """A vertical colour bar with three tick labels and a wrapped label above it (cached: the same bar is drawn
    again at every live frame; callers paste it and never modify it). `height`: the bar's; by default the whole
    picture is no taller than a row of panels (title strip included), so a one-row map is as short as its panels."""
    lines = _wrap(label, 22)
    top = (TEXT + 4) * len(lines) + 8
    height = height or max(96, PANEL + TITLE - top - 16)
    img = Image.new("RGB", (260, height + top + 8), "white")
    d = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        d.text((0, i * (TEXT + 4)), line, fill=(40, 40, 40), font=font(TEXT))
    ramp = lut(cmap)[np.linspace(255, 0, height).round().astype(int)]
    img.paste(Image.fromarray(np.repeat(ramp[:, None], 18, 1)), (0, top))
    d.rectangle((0, top, 17, top + height - 1), outline=(120, 120, 120))
    for t in (0.0, 0.5, 1.0):
        y = top + (1 - t) * (height - 1)
        d.line((18, y, 23, y), fill=(60, 60, 60))
        d.text((27, y), tick_label(vmin + t * (vmax - vmin), vmax), fill=(40, 40, 40), font=font(TEXT), anchor="lm")
    return img


def legend(items, title: str = "") -> Image.Image:
    """Swatches: items are (label, rgb) or (label, 'hatch') / (label, 'dot') / (label, 'ring')."""
    return _legend(tuple((label, sw if isinstance(sw, str) else tuple(sw)) for label, sw in items), title)


@lru_cache(maxsize=64)
def _legend(items: tuple, title: str) -> Image.Image:
    """legend(), cached (callers paste it and never modify it)."""
    row = TEXT + 8
    lines = [(label, sw, k) for label, sw in items for k, label in enumerate(_wrap(label, 26))]
    heads = _wrap(title, 24)
    top = (TEXT + 6) * len(heads) + (4 if heads else 0)
    img = Image.new("RGB", (330, top + row * len(lines) + 4), "white")
    d = ImageDraw.Draw(img)
    for i, head in enumerate(heads):
        d.text((0, i * (TEXT + 6)), head, fill=(40, 40, 40), font=font(TEXT, bold=True))
    for i, (label, sw, k) in enumerate(lines):
        y = top + i * row
        if k == 0:                                    # a wrapped label's swatch sits on its first line
            _swatch(img, d, sw, y + (row - 16) // 2 - 1)
        d.text((24, y + row // 2), label, fill=(40, 40, 40), font=font(TEXT), anchor="lm")
    return img


def _swatch(img, d, sw, y):
    box = (0, y + 1, 15, y + 16)
    if sw == "hatch":
        img.paste(hatch(Image.new("RGB", (16, 16)), np.ones((1, 1), bool)), (0, y + 1))
    elif sw == "dot":
        d.rectangle(box, fill=(200, 200, 200))
        d.ellipse((4, y + 5, 11, y + 12), fill=(255, 255, 255), outline=(20, 20, 20))
    elif sw == "ring":
        d.rectangle(box, fill=GROUP_RGB[1])
        d.ellipse((1, y + 2, 14, y + 15), outline=(255, 255, 255), width=2)
    else:
        d.rectangle(box, fill=tuple(sw), outline=(120, 120, 120))


def _wrap(text: str, width: int) -> list[str]:
    out, cur = [], ""
    for word in text.split():
        if cur and len(cur) + 1 + len(word) > width:
            out.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}".strip()
    return out + ([cur] if cur else [])


def tick_label(v: float, top: float) -> str:
    """An axis label: whole numbers on a scale whose top is >= 10, else two decimals."""
    return f"{v:.0f}" if abs(top) >= 10 else f"{v:.2f}"


# ---------------------------------------------------------------------------------------------------- composites
def layout(n: int, px: int = PANEL) -> list[tuple[int, int]]:
    """Top-left corners of the n panels of a composite (up to COLS per row, a title strip above each)."""
    cols = max(1, min(n, COLS))
    return [(MARGIN + (i % cols) * (px + GAP), MARGIN + TITLE + (i // cols) * (px + TITLE + GAP))
            for i in range(n)]


def locate(n: int, x: float, y: float, grid, px: int = PANEL) -> tuple[int, int] | None:
    """Composite pixel (x, y) -> (panel index, raster position) or None outside every panel."""
    size = cell_px(grid, px) * grid[1]
    for i, (x0, y0) in enumerate(layout(n, px)):
        if x0 <= x < x0 + size and y0 <= y < y0 + size:
            c = cell_px(grid, px)
            return i, int((y - y0) // c) * grid[1] + int((x - x0) // c)
    return None


def composite(panels, side: Image.Image | None = None, px: int = PANEL) -> Image.Image:
    """Panels [(title, image)] side by side under their titles, with a legend or colour bar on the right."""
    n = max(1, len(panels))
    corners = layout(n, px)
    cols = min(n, COLS)
    rows = math.ceil(n / cols)
    width = MARGIN + cols * (px + GAP) + (side.size[0] + GAP if side else 0)
    height = max(MARGIN + rows * (px + TITLE + GAP), MARGIN + TITLE + (side.size[1] if side else 0) + MARGIN)
    out = Image.new("RGB", (width, height), "white")
    d = ImageDraw.Draw(out)
    for (title, im), (x, y) in zip(panels, corners, strict=False):
        name, _, stats = title.partition(" · ")                 # "method · 130 fwd · 1.97×": name, then stats
        d.text((x, y - 8 - TEXT - 6), _fit(d, name, HEAD, px), fill=(30, 30, 30), font=font(HEAD, bold=True),
               anchor="ls")
        if stats:
            d.text((x, y - 8), _fit(d, stats, TEXT, px), fill=(70, 70, 70), font=font(TEXT), anchor="ls")
        out.paste(im, (x, y))
    if side is not None:
        out.paste(side, (MARGIN + cols * (px + GAP), MARGIN + TITLE - 4))
    return out


def message(text: str, px: int = PANEL) -> Image.Image:
    """A grey placeholder panel with a centred note (e.g. 'no CASCADE groups for ar')."""
    img = Image.new("RGB", (px, px), NAN_RGB)
    d = ImageDraw.Draw(img)
    for i, line in enumerate(_wrap(text, 18)):
        d.text((px / 2, px / 2 - 24 + (TEXT + 4) * i), line, fill=(90, 90, 90), font=font(TEXT), anchor="mm")
    return img


def _fit(d: ImageDraw.ImageDraw, text: str, size: int, width: int) -> str:
    """The text cut with an ellipsis to fit `width` px in bold at this size (titles never run into a neighbour)."""
    f = font(size, bold=True)
    while d.textlength(text, font=f) > width and len(text) > 1:
        text = text[:-2] + "…"
    return text
