"""The embedded model's world: 64x64 textured scenes for a 16x16 token grid (4x4 px patches).

Captions, token ids, synonyms and the held-out rule live in `specviz.scenes.data`. Every region carries texture
that is faint to the eye but stochastic: patch-scale colour mottling everywhere, wisps in skies, grass blades, sand
ripples, water ripples, snow sparkle, shading and grain on objects, so that a region that reads as flat is covered
by many near-identical codes, as in natural images (the "token selection ambiguity" of LANTERN; CASCADE's
interchangeable codes in homogeneous regions). Objects are drawn with sharp edges from the caption and a small
layout jitter: the high-detail positions are the predictable ones.
"""
from __future__ import annotations

import numpy as np

from specviz.scenes.data import COLOURS, FIELDS, Scene, random_scene

SIZE = 64
PATCH = 4
GRID = SIZE // PATCH
_YY, _XX = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)


def value_noise(rng: np.random.Generator, h: int, w: int, cell_y: float, cell_x: float) -> np.ndarray:
    """Value noise: a unit-normal lattice with spacing (cell_y, cell_x) px at a random offset, smoothstep-
    interpolated onto an (h, w) float32 grid. Larger cells give smoother fields; unequal cells give streaks."""
    gy, gx = int(h / cell_y) + 3, int(w / cell_x) + 3
    lat = rng.standard_normal((gy, gx)).astype(np.float32)
    y = np.arange(h, dtype=np.float32) / cell_y + rng.random()
    x = np.arange(w, dtype=np.float32) / cell_x + rng.random()
    fy, fx = np.floor(y), np.floor(x)
    ty, tx = y - fy, x - fx
    y0, x0 = fy.astype(np.int64), fx.astype(np.int64)
    ty, tx = (ty * ty * (3 - 2 * ty))[:, None], (tx * tx * (3 - 2 * tx))[None, :]
    a, b = lat[y0][:, x0], lat[y0][:, x0 + 1]
    c, d = lat[y0 + 1][:, x0], lat[y0 + 1][:, x0 + 1]
    return (a * (1 - tx) + b * tx) * (1 - ty) + (c * (1 - tx) + d * tx) * ty


def fractal(rng: np.random.Generator, h: int, w: int, cell: float, octaves: int = 3, stretch: float = 1.0):
    """Sum of value-noise octaves (each half the cell size and amplitude); `stretch` widens cells along x."""
    out, amp = np.zeros((h, w), np.float32), 1.0
    for _ in range(octaves):
        out += amp * value_noise(rng, h, w, cell, cell * stretch)
        cell, amp = max(1.0, cell / 2), amp / 2
    return out


def _ramp(top, bottom, rows: int) -> np.ndarray:
    """A vertical colour gradient (rows, 1, 3) from `top` to `bottom`."""
    t = np.linspace(0, 1, rows, dtype=np.float32)[:, None, None]
    return np.asarray(top, np.float32) * (1 - t) + np.asarray(bottom, np.float32) * t


def _grain(rng, h, w, sigma: float) -> np.ndarray:
    """Per-pixel luminance grain (h, w, 1)."""
    return (rng.standard_normal((h, w)).astype(np.float32) * sigma)[..., None]


MOTTLE = 4.5            # uint8 levels per channel: the patch-scale colour mottling of skies and grounds
MOTTLE_CELL = 4.5       # its lattice spacing in pixels: about one token patch, not aligned to the grid


def mottle(rng, h, w, sigma: float = MOTTLE, cell: float = MOTTLE_CELL) -> np.ndarray:
    """Patch-scale colour mottling (h, w, 3): independent smooth value noise per channel with about one lattice
    cell per token patch. Faint to the eye (a few levels) and unpredictable from the neighbours, so a region that
    reads as flat is covered by many near-identical codes: the ambiguity the relaxed rules rest on."""
    return np.stack([value_noise(rng, h, w, cell, cell) for _ in range(3)], -1) * np.float32(sigma)


def sky(kind: str, hz: int, rng: np.random.Generator) -> np.ndarray:
    """The sky band (hz, 64, 3) float: a gradient with faint wisps, stars or clouds, and fine grain."""
    w = SIZE
    if kind == "day":
        img = _ramp((70, 130, 230), (165, 205, 248), hz)
        wisp = np.clip(fractal(rng, hz, w, 12, 3, stretch=2.5) - 0.3, 0, None)[..., None]
        img = img + wisp * np.float32(0.22) * (np.float32(250) - img)
    elif kind == "sunset":
        img = _ramp((60, 40, 110), (250, 150, 60), hz)
        streak = fractal(rng, hz, w, 4, 2, stretch=5)[..., None]
        img = img + streak * np.array((10, 6, 9), np.float32)
    elif kind == "night":
        img = _ramp((5, 8, 30), (28, 34, 78), hz) + fractal(rng, hz, w, 10, 2)[..., None] * np.float32(3)
        n = int(rng.integers(14, 26))
        ys, xs = rng.integers(0, max(1, hz - 2), n), rng.integers(0, w, n)
        img[ys, xs] = np.float32(120) + rng.random((n, 1)).astype(np.float32) * np.float32(135)
    else:  # overcast
        img = _ramp((118, 123, 133), (172, 175, 183), hz)
        cloud = fractal(rng, hz, w, 14, 3, stretch=1.8)[..., None]
        img = img + cloud * np.float32(14)
    return img + mottle(rng, hz, w) + _grain(rng, hz, w, 1.0)


def ground(kind: str, hz: int, rng: np.random.Generator) -> np.ndarray:
    """The ground band (64 - hz, 64, 3) float: grass blades, sand grain and ripples, water ripples, snow sparkle."""
    h, w = SIZE - hz, SIZE
    if kind == "grass":
        blades = value_noise(rng, h, w, 3.0, 0.7)[..., None]                  # thin vertical streaks
        patches = fractal(rng, h, w, 10, 2)[..., None]
        img = _ramp((70, 160, 60), (45, 125, 40), h) + blades * np.array((4, 8, 3), np.float32)
        img = img + patches * np.array((4, 6, 3), np.float32) + _grain(rng, h, w, 1.5)
    elif kind == "sand":
        y = np.arange(h, dtype=np.float32)[:, None]
        warp = fractal(rng, h, w, 12, 2) * np.float32(1.5)
        ripple = np.sin(y * np.float32(1.3) + _XX[:h] * np.float32(0.25) + warp)[..., None]
        img = _ramp((225, 200, 145), (205, 178, 125), h) + ripple * np.float32(4) + _grain(rng, h, w, 1.5)
    elif kind == "water":
        img = _ramp((45, 95, 175), (20, 52, 120), h)
        rip = fractal(rng, h, w, 2.0, 2, stretch=5)[..., None]
        img = img + rip * np.array((6, 8, 10), np.float32) + _grain(rng, h, w, 1.0)
    else:  # snow
        img = _ramp((240, 243, 250), (222, 228, 242), h) + fractal(rng, h, w, 9, 2)[..., None] * np.float32(4)
        img = img + _grain(rng, h, w, 1.0)
        sparkle = rng.random((h, w)) < 0.02
        img[sparkle] = np.array((255, 255, 255), np.float32) - rng.random((int(sparkle.sum()), 1)) * 10
    return img + mottle(rng, h, w)


def _paint(img: np.ndarray, mask: np.ndarray, colour, light: np.ndarray, tex: np.ndarray) -> np.ndarray:
    """Fill `mask` with `colour` scaled by the lighting field `light` (1 = unlit) plus a texture field; returns
    the mask."""
    col = np.asarray(colour, np.float32)
    img[mask] = col * light[mask][:, None] + tex[mask][:, None]
    return mask


def draw_object(img: np.ndarray, obj: str, colour, cx: int, hz: int, rng: np.random.Generator,
                cy: int = 13) -> np.ndarray:
    """Draw one shaded, textured object in place on a (64, 64, 3) float image; `cy` is a sun's or moon's centre
    row. `rng` draws only texture. Returns the (64, 64) bool mask of the pixels it painted."""
    yy, xx = _YY, _XX
    painted: list[np.ndarray] = []
    tex = fractal(rng, SIZE, SIZE, 3, 2) * np.float32(3) + rng.standard_normal((SIZE, SIZE)).astype(np.float32) * 1.5
    if obj in ("sun", "moon"):
        r = 7.5
        d2 = (yy - cy) ** 2 + (xx - cx) ** 2
        disc = d2 <= r * r
        if obj == "moon":
            disc &= (yy - cy + 1.5) ** 2 + (xx - cx - 4.5) ** 2 > r * r
        light = 1.08 - 0.18 * np.sqrt(d2) / r
        painted.append(_paint(img, disc, colour, light, tex))
    elif obj == "house":
        w, h = 16, 12
        x0, y0 = cx - w // 2, hz + 3 - h
        wall = (yy >= y0) & (yy < y0 + h) & (xx >= x0) & (xx < x0 + w)
        planks = np.where(((yy - y0) % 3) == 0, 0.92, 1.0).astype(np.float32)
        painted.append(_paint(img, wall, colour, planks * (1.02 - 0.1 * (xx - x0) / w), tex))
        door = (yy >= y0 + 5) & (yy < y0 + h) & (np.abs(xx - cx) <= 1.5)
        painted.append(_paint(img, door, (70, 45, 30), np.ones_like(yy), tex * 0.5))
        roof = (yy < y0) & (yy >= y0 - 8) & (np.abs(xx - cx) <= (yy - (y0 - 8)) + 1)
        painted.append(_paint(img, roof, (112, 42, 36), 1.05 - 0.1 * (yy - (y0 - 8)) / 8, tex))
    elif obj == "tree":
        trunk = (yy >= hz - 8) & (yy < hz + 4) & (xx >= cx - 1) & (xx < cx + 2)
        painted.append(_paint(img, trunk, (100, 65, 35), np.ones_like(yy), tex * 0.6))
        cy = hz - 15
        d2 = (yy - cy) ** 2 + (xx - cx) ** 2
        crown = d2 <= 52
        leaves = fractal(rng, SIZE, SIZE, 2, 2) * np.float32(0.06)
        painted.append(_paint(img, crown, colour, 1.05 - 0.15 * (yy - cy + xx - cx + 10) / 20 + leaves, tex))
    else:  # mountain
        h = 23
        top = hz - h
        tri = (yy <= hz + 1) & (yy >= top) & (np.abs(xx - cx) <= (yy - top) * 0.9)
        side = np.where(xx < cx, 1.05, 0.85).astype(np.float32)
        painted.append(_paint(img, tri, colour, side, tex * 1.4))
        cap = tri & (yy <= top + 5)
        painted.append(_paint(img, cap, (245, 245, 250), side, tex * 0.6))
    return np.logical_or.reduce(painted)


REGIONS = ("sky", "ground", "object")            # pixel region classes of render_layers


def render(s: Scene, rng: np.random.Generator, texture: np.random.Generator | None = None) -> np.ndarray:
    """Draw a scene: uint8 array (64, 64, 3). Deterministic given the generator's state. The layout (horizon
    row, object column, sun/moon row) is drawn first from `rng`; texture from `texture` when given (the same
    layout under fresh texture: ambiguity.texture_entropy), else from `rng`."""
    return render_layers(s, rng, texture)[0]


def render_layers(s: Scene, rng: np.random.Generator, texture: np.random.Generator | None = None):
    """(image as `render` draws it from the same generators, pixel regions (64, 64) int: indices into REGIONS)."""
    hz = 40 + int(rng.integers(-3, 4))                                     # horizon row
    cx = (13, 32, 51)[s.position] + int(rng.integers(-3, 4))
    cy = 13 + int(rng.integers(-2, 3))
    tex = rng if texture is None else texture
    img = np.empty((SIZE, SIZE, 3), np.float32)
    img[:hz] = sky(FIELDS["sky"][s.sky], hz, tex)
    img[hz:] = ground(FIELDS["ground"][s.ground], hz, tex)
    obj = draw_object(img, FIELDS["object"][s.object], COLOURS[FIELDS["colour"][s.colour]], cx, hz, tex, cy)
    regions = np.where(np.arange(SIZE)[:, None] < hz, 0, 1).repeat(SIZE, 1)
    regions[obj] = 2
    return np.clip(img, 0, 255).round().astype(np.uint8), regions


def batch(rng: np.random.Generator, size: int, held_out: bool = False) -> tuple[np.ndarray, list[Scene]]:
    """`size` fresh scenes: images (B, 64, 64, 3) uint8 and their attributes."""
    scenes = [random_scene(rng, held_out) for _ in range(size)]
    return np.stack([render(s, rng) for s in scenes]), scenes
