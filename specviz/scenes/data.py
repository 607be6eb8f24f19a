"""Procedural captioned scenes: the embedded model's world.

A scene is a 48x48 RGB image of a sky over a ground with one object. Its caption has five fields, each with its own
token ids (docs/calibration.md lesson 2): sky, ground, object, colour, position. A fixed, documented set of full
combinations is held out of training (`is_held_out`) so that evaluation can use captions the model never saw.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

SIZE = 48
FIELDS: dict[str, tuple[str, ...]] = {
    "sky": ("day", "sunset", "night", "overcast"),
    "ground": ("grass", "sand", "water", "snow"),
    "object": ("sun", "moon", "house", "tree", "mountain"),
    "colour": ("red", "orange", "yellow", "green", "blue", "purple"),
    "position": ("left", "centre", "right"),
}
FIELD_NAMES = tuple(FIELDS)
# caption token ids: each field owns a block; the last id of a block is that field's null ("unspecified")
_OFFSETS = {}
_o = 0
for _f, _vals in FIELDS.items():
    _OFFSETS[_f] = _o
    _o += len(_vals) + 1
CAPTION_VOCAB = _o
CAPTION_LEN = len(FIELDS)

# words a user may type for each value (the first is the canonical one used in generated captions)
SYNONYMS: dict[str, dict[str, tuple[str, ...]]] = {
    "sky": {"day": ("day", "daytime", "clear", "sunny"), "sunset": ("sunset", "dusk", "evening"),
            "night": ("night", "starry", "stars", "midnight"), "overcast": ("overcast", "cloudy", "clouds", "grey")},
    "ground": {"grass": ("grass", "grassy", "meadow", "field"), "sand": ("sand", "sandy", "desert", "beach"),
               "water": ("water", "lake", "sea", "ocean"), "snow": ("snow", "snowy", "winter", "ice")},
    "object": {k: (k,) for k in FIELDS["object"]} | {"mountain": ("mountain", "peak", "hill")},
    "colour": {k: (k,) for k in FIELDS["colour"]} | {"purple": ("purple", "violet")},
    "position": {"left": ("left",), "centre": ("centre", "center", "middle"), "right": ("right",)},
}
_WORD_TO = {w: (f, v) for f, d in SYNONYMS.items() for v, ws in d.items() for w in ws}

COLOURS = {"red": (210, 40, 40), "orange": (240, 140, 30), "yellow": (245, 220, 50),
           "green": (40, 170, 60), "blue": (40, 80, 220), "purple": (140, 50, 180)}


@dataclass(frozen=True)
class Scene:
    """One scene's attributes (indices into FIELDS)."""
    sky: int
    ground: int
    object: int
    colour: int
    position: int

    def values(self) -> dict[str, str]:
        return {f: FIELDS[f][getattr(self, f)] for f in FIELD_NAMES}

    def caption(self) -> str:
        v = self.values()
        where = "in the centre" if v["position"] == "centre" else f"on the {v['position']}"
        sky = {"day": "a clear day sky", "sunset": "a sunset sky", "night": "a starry night sky",
               "overcast": "an overcast sky"}[v["sky"]]
        art = "an" if v["colour"][0] in "aeiou" else "a"
        return f"{art} {v['colour']} {v['object']} {where}, {sky} over {v['ground']}"

    def tokens(self) -> list[int]:
        return [_OFFSETS[f] + getattr(self, f) for f in FIELD_NAMES]


def null_tokens() -> list[int]:
    """The unconditional caption: every field unspecified."""
    return [_OFFSETS[f] + len(FIELDS[f]) for f in FIELD_NAMES]


def scene_from_tokens(tokens: list[int]) -> Scene:
    """Inverse of Scene.tokens() for a fully specified caption."""
    return Scene(*[t - _OFFSETS[f] for t, f in zip(tokens, FIELD_NAMES)])


def parse_prompt(text: str) -> list[int]:
    """Map free text onto the five caption fields; fields not mentioned stay unspecified (null id).

    Raises ValueError when no known word is found, naming the words the model understands.
    """
    toks = null_tokens()
    found = False
    for word in re.findall(r"[a-z]+", text.lower()):
        if word in _WORD_TO:
            f, v = _WORD_TO[word]
            i = FIELD_NAMES.index(f)
            if toks[i] == _OFFSETS[f] + len(FIELDS[f]):      # first mention of a field wins
                toks[i] = _OFFSETS[f] + FIELDS[f].index(v)
                found = True
    if not found:
        words = ", ".join(sorted({ws[0] for d in SYNONYMS.values() for ws in d.values()}))
        raise ValueError(f"the scenes model understands none of the words in {text!r}; try words such as: {words}")
    return toks


def is_held_out(s: Scene) -> bool:
    """Held-out full combinations (about 1 in 11), never shown in training: all single values still occur."""
    return (s.sky + 2 * s.ground + 3 * s.object + 5 * s.colour + 7 * s.position) % 11 == 0


def all_scenes() -> list[Scene]:
    import itertools
    return [Scene(*c) for c in itertools.product(*(range(len(v)) for v in FIELDS.values()))]


def random_scene(rng: np.random.Generator, held_out: bool = False) -> Scene:
    while True:
        s = Scene(*(int(rng.integers(len(v))) for v in FIELDS.values()))
        if is_held_out(s) == held_out:
            return s


def _mix(a, b, t):
    return (np.asarray(a, np.float32)[None, :] * (1 - t)[:, None] + np.asarray(b, np.float32)[None, :] * t[:, None])


def render(s: Scene, rng: np.random.Generator) -> np.ndarray:
    """Draw a scene: uint8 array (48, 48, 3). Deterministic given the generator's state."""
    n = SIZE
    img = np.zeros((n, n, 3), np.float32)
    hz = 30 + int(rng.integers(-2, 3))                      # horizon row
    t = np.linspace(0, 1, hz, dtype=np.float32)
    sky = FIELDS["sky"][s.sky]
    if sky == "day":
        img[:hz] = _mix((70, 130, 230), (170, 210, 250), t)[:, None]
    elif sky == "sunset":
        img[:hz] = _mix((60, 40, 110), (250, 150, 60), t ** 0.8)[:, None]
    elif sky == "night":
        img[:hz] = _mix((5, 8, 30), (25, 30, 70), t)[:, None]
        for _ in range(int(rng.integers(10, 18))):
            y, x = int(rng.integers(0, hz - 3)), int(rng.integers(0, n))
            img[y, x] = (255, 255, 230)
    else:
        img[:hz] = _mix((120, 125, 135), (175, 178, 185), t)[:, None]
        yy, xx = np.mgrid[0:n, 0:n]
        for _ in range(int(rng.integers(2, 4))):
            cy, cx = rng.integers(3, max(4, hz - 10)), rng.integers(0, n)
            ry, rx = rng.integers(3, 5), rng.integers(7, 12)
            m = (((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 < 1) & (yy < hz)
            img[m] = (215, 217, 222)
    gh = n - hz
    ground = FIELDS["ground"][s.ground]
    noise = rng.standard_normal((gh, n)).astype(np.float32)
    if ground == "grass":
        img[hz:] = np.array((60, 150, 50), np.float32) + (noise * 16)[..., None] * np.array((0.5, 1.0, 0.4))
    elif ground == "sand":
        base = np.array((220, 195, 140), np.float32)
        img[hz:] = base + (noise * 8)[..., None]
        rows = np.arange(gh)[:, None]
        ripple = (np.sin(rows * 1.6 + np.arange(n)[None, :] * 0.35) > 0.75)
        img[hz:][ripple] -= 25
    elif ground == "water":
        t2 = np.linspace(0, 1, gh, dtype=np.float32)
        img[hz:] = _mix((40, 90, 170), (20, 50, 120), t2)[:, None]
        for _ in range(int(rng.integers(5, 9))):
            y, x, w = int(rng.integers(hz + 1, n)), int(rng.integers(0, n - 6)), int(rng.integers(3, 8))
            img[y, x:x + w] = (140, 180, 235)
    else:
        img[hz:] = np.array((235, 238, 245), np.float32) + (noise * 6)[..., None]
    col = np.array(COLOURS[FIELDS["colour"][s.colour]], np.float32)
    cx = (10, 24, 38)[s.position] + int(rng.integers(-2, 3))
    _draw_object(img, FIELDS["object"][s.object], col, cx, hz, rng)
    return np.clip(img, 0, 255).astype(np.uint8)


def _draw_object(img, obj, col, cx, hz, rng):
    n = SIZE
    yy, xx = np.mgrid[0:n, 0:n]
    if obj in ("sun", "moon"):
        cy, r = 10 + int(rng.integers(-2, 3)), 5.5
        disc = (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r
        if obj == "moon":
            disc &= (yy - cy + 1) ** 2 + (xx - cx - 3.5) ** 2 > r * r
        img[disc] = col
    elif obj == "house":
        w, h = 12, 9
        x0, y0 = cx - w // 2, hz + 2 - h
        img[y0:y0 + h, x0:x0 + w] = col
        img[y0 + 4:y0 + h, cx - 1:cx + 2] = (70, 45, 30)                   # door
        roof = (yy <= y0) & (yy >= y0 - 6) & (np.abs(xx - cx) <= (yy - (y0 - 6)) + 1)
        img[roof] = (110, 40, 35)
    elif obj == "tree":
        img[hz - 6:hz + 3, cx - 1:cx + 1] = (100, 65, 35)
        crown = (yy - (hz - 11)) ** 2 + (xx - cx) ** 2 <= 30
        img[crown] = col
    else:  # mountain
        h = 17
        tri = (yy <= hz + 1) & (yy >= hz - h) & (np.abs(xx - cx) <= (yy - (hz - h)) * 0.9)
        img[tri] = col
        cap = tri & (yy <= hz - h + 4)
        img[cap] = (245, 245, 250)


def batch(rng: np.random.Generator, size: int, held_out: bool = False) -> tuple[np.ndarray, list[Scene]]:
    """`size` fresh scenes: images (B, 48, 48, 3) uint8 and their attributes."""
    scenes = [random_scene(rng, held_out) for _ in range(size)]
    return np.stack([render(s, rng) for s in scenes]), scenes
