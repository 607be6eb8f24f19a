"""The race as a video (GIF and MP4), drawn from finished traces alone, so a finished run and the same run's opened
trace files give the same film.

Design (what the tests check):
- The clock is the race's: target forwards. Frame k shows every lane after k forwards (k = 0: nothing decided, the
  whole grid hatched); a lane that finished at forward F shows "done at forward F" from then on. Frames are clock
  values 0, s, 2s, ..., T (T = the slowest lane's forwards, always included; s = ceil((T + 1) / MAX_FRAMES)), each
  shown 1/FPS s; the final frame is then held HOLD_S s more: the MP4 repeats it (constant frame rate), the GIF gives
  it a longer duration (GIF writers merge equal frames). `frame_count(traces, kind)` says how many frames each has.
- A cell shows its final decoded patch from the forward that committed its token (committed tokens never change);
  undecided cells are hatched as in the app's race. The last frame's lane images are therefore exactly the final
  images, drawn by `panels.race_frame` at the lane's size.
- Every frame carries the settings (prompt, seed, λ, δ, τ_pos, τ_seq) and the clock; lanes sit on a regular grid
  (no method emphasised), 16:9 at SIZE.
Encoding: Pillow's GIF writer, and imageio's PyAV plugin (libx264, yuv420p) for MP4.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from specviz.render import draw
from specviz.render.panels import race_frame

SIZE = (1280, 720)                  # 16:9
FPS = 8
MAX_FRAMES = 160                    # clock frames at most (then the clock steps by more than one forward)
HOLD_S = 2.0                        # the final frame is held this long
HEADER, LABEL, GAP = 92, 58, 16     # px: settings band, lane caption, gaps
BG, INK, SUB = (255, 255, 255), (24, 26, 31), (88, 92, 102)


@dataclass(frozen=True)
class LaneBox:
    """Where one lane's image sits in a frame (top-left corner; px: the image's width, the panel size
    draw.upscale is given)."""
    x: int
    y: int
    px: int


def lane_boxes(n: int, grid, size=SIZE) -> list[LaneBox]:
    """A regular grid of n equal lanes, the column count chosen for the largest lanes that fit."""
    w, h = size
    best = (0, 1)
    for cols in range(1, n + 1):
        rows = math.ceil(n / cols)
        cell = min((w - (cols + 1) * GAP) // cols // grid[1], (h - HEADER - rows * (LABEL + GAP)) // rows // grid[0])
        best = max(best, (cell, -cols))
    cell, cols = max(1, best[0]), -best[1]
    rows = math.ceil(n / cols)
    px, ph = cell * grid[1], cell * grid[0]
    x0 = (w - cols * px - (cols - 1) * GAP) // 2
    y0 = HEADER + (h - HEADER - rows * (ph + LABEL + GAP)) // 2           # the lane block centred below the header
    boxes = []
    for i in range(n):
        r, c = divmod(i, cols)
        boxes.append(LaneBox(x0 + c * (px + GAP), y0 + r * (ph + LABEL + GAP) + LABEL, px))
    return boxes


def clock(traces: dict) -> list[int]:
    """The clock values (target forwards) drawn, 0 first and the slowest lane's last forward last."""
    total = max(len(t.steps) for t in traces.values())
    stride = max(1, math.ceil((total + 1) / MAX_FRAMES))
    ticks = list(range(0, total + 1, stride))
    return ticks if ticks[-1] == total else ticks + [total]


def frame_count(traces: dict, kind: str, fps: int = FPS) -> int:
    """Frames in the written film: 'gif' one per clock value, 'mp4' plus the held final frame's repeats."""
    return len(clock(traces)) + (round(HOLD_S * fps) if kind == "mp4" else 0)


def committed_after(trace, k: int) -> np.ndarray:
    """(H, W) bool: positions whose token was committed within the first k target forwards."""
    gh, gw = trace.grid
    done = np.zeros(gh * gw, bool)
    for st in trace.steps[:k]:
        for ev in st.events:
            if ev.commits and ev.pos < gh * gw:
                done[ev.pos] = True
    return done.reshape(gh, gw)


def settings_line(traces: dict) -> str:
    """Prompt-free settings every lane shares: the seed and the four live knobs (from the first trace's config)."""
    cfg = next(iter(traces.values())).config
    return (f"seed {cfg.get('seed', '?')} · λ {cfg.get('lam', '?')} · δ {cfg.get('delta', '?')} · "
            f"τ_pos {cfg.get('tau_pos', '?')} · τ_seq {cfg.get('tau_seq', '?')}")


def draw_frame(traces: dict, images: dict, k: int, labels: dict | None = None, size=SIZE) -> np.ndarray:
    """One frame (H, W, 3) uint8 of the race after k target forwards."""
    grid = next(iter(traces.values())).grid
    canvas = Image.new("RGB", size, BG)
    d = ImageDraw.Draw(canvas)
    prompt = str(next(iter(traces.values())).config.get("prompt", ""))
    d.text((GAP, 10), _fit(d, prompt, 30, size[0] - 2 * GAP, True), font=draw.font(30, True), fill=INK)
    total = max(len(t.steps) for t in traces.values())
    d.text((GAP, 52), f"{settings_line(traces)}   |   clock: target forward {min(k, total)} of {total}",
           font=draw.font(24), fill=SUB)
    for box, (m, t) in zip(lane_boxes(len(traces), grid, size), traces.items()):
        n = len(t.steps)
        state = f"done at forward {n}" if k >= n else f"forward {k}"
        tokens = int(committed_after(t, k).sum())
        name = (labels or {}).get(m, m)
        d.text((box.x, box.y - LABEL + 2), _fit(d, name, 24, box.px, True), font=draw.font(24, True), fill=INK)
        d.text((box.x, box.y - LABEL + 30), _fit(d, f"{state} · {tokens}/{grid[0] * grid[1]} tokens", 20, box.px),
               font=draw.font(20), fill=SUB)
        canvas.paste(lane_image(t, images[m], k, box.px), (box.x, box.y))
    return np.asarray(canvas)


def lane_image(trace, image, k: int, px: int) -> Image.Image:
    """The lane after k forwards: the final image's committed cells, the rest hatched (the app's race_frame)."""
    return race_frame(Image.fromarray(np.asarray(image, np.uint8)), committed_after(trace, k), trace.grid, px)


def frames(traces: dict, images: dict, labels: dict | None = None):
    """One frame per clock value, in order."""
    for k in clock(traces):
        yield draw_frame(traces, images, k, labels)


def write_videos(traces: dict, images: dict, stem: Path, labels: dict | None = None,
                 fps: int = FPS) -> tuple[Path, Path]:
    """Write stem.gif and stem.mp4; returns their paths. The GIF's palette is each frame's own (fast octree, no
    dithering: flat token cells stay flat); the MP4 is H.264 yuv420p, which every slide program plays. Frames are
    drawn once and streamed into the MP4 as they come; only the GIF's palette frames (1 byte a pixel) are kept. Holding
    the RGB film and its stacked copy took ~1 GB at 160 frames, and the server kept that memory (scripts/soak.py)."""
    import imageio.v3 as iio  # the PyAV plugin pulls in av (ffmpeg): loaded only when a video is asked for
    gif, mp4 = stem.parent / f"{stem.name}.gif", stem.parent / f"{stem.name}.mp4"   # stems hold dots (λ 0.5)
    pal = []
    with iio.imopen(mp4, "w", plugin="pyav") as out:
        out.init_video_stream("libx264", fps=fps, pixel_format="yuv420p")
        for f in frames(traces, images, labels):
            out.write_frame(f)
            pal.append(Image.fromarray(f).quantize(255, Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE))
            last = f
        for _ in range(round(HOLD_S * fps)):
            out.write_frame(last)
    ms = [round(1000 / fps)] * len(pal)
    ms[-1] += round(1000 * HOLD_S)
    pal[0].save(gif, save_all=True, append_images=pal[1:], duration=ms, loop=0)
    return gif, mp4


def _fit(d: ImageDraw.ImageDraw, text: str, size: int, width: int, bold: bool = False) -> str:
    """The text, cut with an ellipsis so it fits `width` px at this font size."""
    f = draw.font(size, bold)
    if d.textlength(text, font=f) <= width:
        return text
    while text and d.textlength(text + "…", font=f) > width:
        text = text[:-1]
    return text + "…"
