"""The embedded model's captions: a scene's five fields, their token ids, the words a user may type, and the
held-out rule. The pixels are drawn by `specviz.scenes.world`.

A scene is a sky over a ground with one object. Its caption has five fields, each with its own token ids
(docs/calibration.md lesson 2): sky, ground, object, colour, position. A fixed, documented set of full combinations
is held out of training (`is_held_out`) so that evaluation can use captions the model never saw.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np

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
    return [Scene(*c) for c in itertools.product(*(range(len(v)) for v in FIELDS.values()))]


def random_scene(rng: np.random.Generator, held_out: bool = False) -> Scene:
    while True:
        s = Scene(*(int(rng.integers(len(v))) for v in FIELDS.values()))
        if is_held_out(s) == held_out:
            return s
