"""Charts drawn with PIL (a matplotlib figure cost ~0.3 s per run to draw and encode in the server): grouped bars."""
from __future__ import annotations

from PIL import Image, ImageDraw

from specviz.render.draw import font, tick_label

BAR_RGB = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
           (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207))      # matplotlib's tab10


MARGINS = (64, 160, 62, 48)            # left, right (legend), top (title, then the y label), bottom (x label)


def bar_chart(series: dict, title: str, xlabel: str, ylabel: str, size=(900, 380)) -> Image.Image:
    """Grouped bars: series = {name: counts per x = 0, 1, 2, ...}. Bar heights are exactly proportional to the
    counts (the top of the axis is the largest count), so a bar of count c is round(c / top * plot height) px."""
    w, h = size
    left, right, top_m, bottom = MARGINS
    pw, ph = w - left - right, h - top_m - bottom
    img = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(img)
    d.text((8, 8), title, fill=(30, 30, 30), font=font(17, bold=True))
    n_x = max((len(c) for c in series.values()), default=1)
    peak = max((max(c) for c in series.values() if len(c)), default=0) or 1
    slot = pw / max(1, n_x)
    width = 0.8 * slot / max(1, len(series))
    y0 = top_m + ph
    for k, (name, counts) in enumerate(series.items()):
        rgb = BAR_RGB[k % len(BAR_RGB)]
        for x, c in enumerate(counts):
            if c <= 0:
                continue
            x0 = left + x * slot + 0.1 * slot + k * width
            d.rectangle((round(x0), y0 - round(c / peak * ph), round(x0 + width) - 1, y0 - 1), fill=rgb)
        d.rectangle((w - right + 12, top_m + 24 * k + 4, w - right + 26, top_m + 24 * k + 18), fill=rgb)
        d.text((w - right + 32, top_m + 24 * k + 11), name, fill=(40, 40, 40), font=font(15), anchor="lm")
    d.line((left, y0, left + pw, y0), fill=(90, 90, 90))
    d.line((left, top_m, left, y0), fill=(90, 90, 90))
    for x in range(n_x):
        d.text((left + (x + 0.5) * slot, y0 + 4), str(x), fill=(60, 60, 60), font=font(15), anchor="ma")
    for frac in (0.0, 0.5, 1.0):
        y = y0 - round(frac * ph)
        d.line((left - 4, y, left, y), fill=(90, 90, 90))
        d.text((left - 6, y), tick_label(frac * peak, peak), fill=(60, 60, 60), font=font(15), anchor="rm")
    d.text((left + pw / 2, h - 6), xlabel, fill=(40, 40, 40), font=font(15), anchor="md")
    d.text((8, 34), ylabel, fill=(40, 40, 40), font=font(15))              # below the title, above the top tick
    return img
