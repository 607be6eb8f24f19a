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
- Every frame carries the settings (prompt, seed, the sliders' values, noise) and the clock; lanes sit on a regular grid
  (no method emphasised), 16:9 at SIZE, each captioned whole — its name and caption wrapped, never cut — above or
  beside its image, the arrangement with the largest pictures (render/frame_layout.py); a finished lane's caption
  carries its step compression.
- The app's Replay tab draws its synchronized picture with the same `draw_frame`, adding each lane's drafts: at clock
  k (1 <= k <= the lane's forwards) the cells drafted at the lane's step k - 1 and still uncommitted show the drafted
  code's decoded patch faded (FADE) — proposals, not commitments — or an outline when no decoder is at hand.
  `locate_lane` maps a click on that picture back to (lane, cell).
Encoding: Pillow's GIF writer, and imageio's PyAV plugin (libx264, yuv420p) for MP4.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from specviz.analysis import paired
from specviz.core.cards import Cards
from specviz.core.records import ACCEPTED
from specviz.render import draw
from specviz.render.frame_layout import GAP, SIZE, LaneBox, lane_boxes, wrap
from specviz.render.panels import race_frame

FPS = 8
MAX_FRAMES = 160                    # clock frames at most (then the clock steps by more than one forward)
HOLD_S = 2.0                        # the final frame is held this long
BG, INK, SUB = (255, 255, 255), (24, 26, 31), (88, 92, 102)
FADE = 0.5                          # a draft's patch is blended this much with white: a proposal, not a commitment
DRAFT_RGB = (200, 204, 212)         # the drafted cell's outline
NO_IMAGE_RGB = (200, 200, 200)      # a lane whose image was not decoded here (an opened trace)
OUTLINE = "outline"                 # lane_image(drafts=OUTLINE): drafted cells outlined only (no decoder at hand)


def frame_boxes(traces: dict, size=SIZE, labels: dict | None = None) -> list[LaneBox]:
    """Where draw_frame puts each lane: frame_layout's grid sized for the lanes' names (`labels`, else the methods)
    and the captions of the last frame (the longest: every lane done, its step compression and its word on AR), so
    the lanes do not move during the film."""
    return lane_boxes(len(traces), next(iter(traces.values())).grid, size, final_captions(traces),
                      lane_names(traces, labels))


def lane_names(traces: dict, labels: dict | None = None) -> tuple:
    """Each lane's name as drawn: its label, else its method."""
    return tuple((labels or {}).get(m, m) for m in traces)


def final_captions(traces: dict) -> tuple:
    vs = paired.against_ar(traces)
    return tuple(lane_line(t, slowest(traces), vs.get(m)) for m, t in traces.items())


def slowest(traces: dict) -> int:
    """T: the slowest lane's target forwards, the clock's last value."""
    return max(len(t.steps) for t in traces.values())


class LaneLabels(dict):
    """method -> the lane's name as drawn, with `sliders`: the knob cards the header's settings line carries."""

    def __init__(self, items=(), /, *, sliders: tuple = (), **named):
        super().__init__(items, **named)
        self.sliders = tuple(sliders)


def lane_labels(traces: dict, cards: Cards) -> LaneLabels:
    """method -> its card's label (a method unknown here keeps its name), carrying the cards' sliders."""
    return LaneLabels(((m, cards.of(m).label) for m in traces), sliders=cards.sliders)


def clock(traces: dict) -> list[int]:
    """The clock values (target forwards) drawn, 0 first and the slowest lane's last forward last."""
    total = slowest(traces)
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


def settings_line(traces: dict, sliders: tuple = ()) -> str:
    """Prompt-free settings every lane shares: the seed, each slider's value (`sliders`: knob cards, Cards.sliders)
    and the noise (from the first trace's config; a config without the quiet noise knob ran with the papers' noise)."""
    cfg = next(iter(traces.values())).config
    return " · ".join([f"seed {cfg.get('seed', '?')}", *(f"{k.sym} {cfg.get(k.name, '?')}" for k in sliders),
                       noise_words(cfg)])


def noise_words(cfg: dict) -> str:
    """"keyed noise" or "papers' noise": what the run's random numbers were (paired.DEFAULTS: the quiet default)."""
    return f"{cfg.get('noise', paired.DEFAULTS['noise'])} noise".replace("papers noise", "papers' noise")


def proposals(trace, step: int) -> dict[int, int]:
    """position -> the token drafted there at trace.steps[step] (positions inside the grid). A tree may propose
    several alternatives for one position: the one on the accepted path (judged exact or relaxed) if any, else the
    first drafted node there (in the step's drafted order)."""
    st, n = trace.steps[step], trace.grid[0] * trace.grid[1]
    accepted = {e.node for e in st.events if e.decision in ACCEPTED}
    out: dict[int, int] = {}
    for d in st.drafted:
        if d.pos < n and (d.pos not in out or d.node in accepted):
            out[d.pos] = d.token
    return out


def draw_frame(traces: dict, images: dict, k: int, labels: dict | None = None, size=SIZE,
               drafts=None, sliders: tuple | None = None) -> np.ndarray:
    """One frame (H, W, 3) uint8 of the race after k target forwards (`drafts`: as lane_image's; None in the film;
    `sliders`: the header's knob cards, by default those `labels` carry when they are lane_labels')."""
    if sliders is None:
        sliders = labels.sliders if isinstance(labels, LaneLabels) else ()
    canvas = Image.new("RGB", size, BG)
    d = ImageDraw.Draw(canvas)
    prompt = str(next(iter(traces.values())).config.get("prompt", ""))
    d.text((GAP, 10), _fit(d, prompt, 30, size[0] - 2 * GAP, True), font=draw.font(30, True), fill=INK)
    total = slowest(traces)
    head = f"{settings_line(traces, sliders)}   |   clock: target forward {min(k, total)} of {total}"
    d.text((GAP, 52), head, font=draw.font(fitting_px(d, head, size[0] - 2 * GAP)), fill=SUB)
    vs = paired.against_ar(traces) if k >= total else {}            # the word on AR's image: once all are done
    for box, name, (m, t) in zip(frame_boxes(traces, size, labels), lane_names(traces, labels), traces.items()):
        names = wrap(name, box.tw, box.name_font, True)                       # the name whole, wrapped as laid out
        for i, line in enumerate(names):
            d.text((box.tx, box.ty + 2 + i * box.name_h), line, font=draw.font(box.name_font, True), fill=INK)
        for i, line in enumerate(wrap(lane_line(t, k, vs.get(m)), box.tw, box.font)):
            d.text((box.tx, box.ty + len(names) * box.name_h + i * box.line_h), line, font=draw.font(box.font),
                   fill=SUB)
        canvas.paste(lane_image(t, images.get(m), k, box.px, drafts), (box.x, box.y))
    return np.asarray(canvas)


def lane_line(trace, k: int, changed: int | None = None) -> str:
    """A lane's caption after k forwards: its clock state and committed tokens, once done its step compression
    instead of the tokens (all of them); the keyed word on AR's image when `changed` is given
    (paired.vs_ar_words)."""
    n = trace.grid[0] * trace.grid[1]
    line = f"{lane_state(trace, k)} · {int(committed_after(trace, k).sum())}/{n} tokens"
    if k >= len(trace.steps) and "step_compression" in trace.summary:   # done (all tokens): the headline number
        line = f"{lane_state(trace, k)} · {trace.summary['step_compression']:.2f}× step compression"
    words = paired.vs_ar_words(trace.method, changed)
    return f"{line} · {words}" if words else line


def lane_state(trace, k: int) -> str:
    """A lane's clock label after k forwards, as the race counts: "forward k", or "done at forward F" once k >= F."""
    n = len(trace.steps)
    return f"done at forward {n}" if k >= n else f"forward {k}"


def lane_image(trace, image, k: int, px: int, drafts=None) -> Image.Image:
    """The lane after k forwards: the final image's committed cells, the rest hatched (the app's race_frame); grey
    cells when `image` is None. `drafts` (the Replay tab): a code -> decoded patch callable, or OUTLINE; then the
    cells drafted at step k - 1 (1 <= k <= the lane's forwards) that are still uncommitted show that draft."""
    grid = trace.grid
    base = np.full((*grid, 3), NO_IMAGE_RGB, np.uint8) if image is None else np.asarray(image, np.uint8)
    done = committed_after(trace, k)
    im = race_frame(Image.fromarray(base), done, grid, px)
    if drafts is None or not 1 <= k <= len(trace.steps):
        return im
    shown = {p: tok for p, tok in proposals(trace, k - 1).items() if not done.flat[p]}
    return draw_drafts(im.copy(), shown, grid, None if drafts == OUTLINE else drafts)


def draw_drafts(im: Image.Image, shown: dict, grid, patch=None) -> Image.Image:
    """Each drafted cell (position -> token) as `patch(token)` blended FADE with white and outlined; with no patch
    callable, the outline alone (over the hatching)."""
    c = im.size[0] // grid[1]
    d = ImageDraw.Draw(im)
    for pos, tok in sorted(shown.items()):
        r, col = divmod(pos, grid[1])
        x0, y0 = col * c, r * c
        if patch is not None:
            a = np.asarray(patch(tok).convert("RGB").resize((c, c), Image.NEAREST), np.float32)
            im.paste(Image.fromarray((a * (1 - FADE) + 255 * FADE).round().astype(np.uint8)), (x0, y0))
        d.rectangle((x0 + 1, y0 + 1, x0 + c - 2, y0 + c - 2), outline=DRAFT_RGB, width=1)
    return im


def locate_lane(traces: dict, x: float, y: float, size=SIZE, labels: dict | None = None) -> tuple[str, int] | None:
    """A pixel (x, y) of draw_frame's picture (drawn with these `labels`) -> (the lane's method, the raster position
    clicked), or None outside every lane's grid."""
    grid = next(iter(traces.values())).grid
    for box, m in zip(frame_boxes(traces, size, labels), traces):
        c = draw.cell_px(grid, box.px)
        col, row = int((x - box.x) // c), int((y - box.y) // c)
        if x >= box.x and y >= box.y and col < grid[1] and row < grid[0]:
            return m, row * grid[1] + col
    return None


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


def fitting_px(d: ImageDraw.ImageDraw, text: str, width: int, largest: int = 24, smallest: int = 12) -> int:
    """The largest font size (px, from `largest` down to `smallest`) at which `text` fits `width` px: the settings
    line whole (a long seed and the noise made it run off the frame at 24 px)."""
    return next((px for px in range(largest, smallest, -1) if d.textlength(text, font=draw.font(px)) <= width),
                smallest)


def _fit(d: ImageDraw.ImageDraw, text: str, size: int, width: int, bold: bool = False) -> str:
    """The text, cut with an ellipsis so it fits `width` px at this font size."""
    f = draw.font(size, bold)
    if d.textlength(text, font=f) <= width:
        return text
    while text and d.textlength(text + "…", font=f) > width:
        text = text[:-1]
    return text + "…"
