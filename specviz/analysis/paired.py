"""Paired comparison against AR under the same keyed noise (docs/methods.md §9): what a method changed on
this image. With `--noise keyed` AR's tokens are a function of the seed, a lossless method's tokens equal them and a
relaxed method's differ only downstream of a relaxed decision, so the differences are the acceleration's effect,
free of sampling noise. Pure: traces and decoded images in, numbers out."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from specviz.core.trace import Trace

SAME, FIRST, DOWNSTREAM = 0, 1, 2     # the "changed vs AR" map's categories (NaN: a position either run left undecided)
# what must agree for two runs to share their keyed noise and their target laws: everything but the method's own
# drafting and rule knobs
SHARED = ("noise", "seed", "prompt", "model", "temperature", "top_k", "top_p", "cfg")
DEFAULTS = {"noise": "papers"}        # a quiet knob: absent from a config at its default


@dataclass(frozen=True)
class Paired:
    method: str
    changed: tuple             # raster positions whose token differs from AR's
    first: int | None          # the first departure (None: identical)
    downstream: tuple          # changed positions after the first departure
    psnr: float | None         # pixel PSNR against AR's image [dB] (inf when equal; None without images)
    mean_abs: float | None     # mean |pixel difference| against AR's image, 0-255 per channel

    @property
    def count(self) -> int:
        return len(self.changed)

    @property
    def identical(self) -> bool:
        return not self.changed


def comparable(trace: Trace, ar: Trace) -> str | None:
    """Why `trace` cannot be compared with `ar` token by token (None: it can): both keyed, same seed, prompt, model,
    sampling knobs and grid."""
    if ar.method != "ar":
        return f"the reference run is {ar.method}, not ar"
    if trace.config.get("noise", "papers") != "keyed":
        return f"{trace.method} ran with the papers' noise: run with noise = keyed to compare with AR"
    for k in SHARED:
        if trace.config.get(k, DEFAULTS.get(k)) != ar.config.get(k, DEFAULTS.get(k)):
            return f"{trace.method} and ar differ in {k}"
    if list(trace.grid) != list(ar.grid):
        return "the grids differ"
    return None


def changed_positions(tokens: list, ar_tokens: list) -> tuple:
    """Positions (over the shorter of the two lists: the decided prefix of a growing run) where tokens differ."""
    return tuple(i for i, (a, b) in enumerate(zip(tokens, ar_tokens)) if a != b)


def pixel_diff(image, ar_image) -> tuple[float, float]:
    """(PSNR in dB, inf when equal; mean absolute difference) of two uint8 images (H, W, 3)."""
    a, b = np.asarray(image, np.float64), np.asarray(ar_image, np.float64)
    if a.shape != b.shape:
        raise ValueError(f"images differ in shape: {a.shape} vs {b.shape}")
    mse = float(np.mean((a - b) ** 2))
    psnr = math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)
    return psnr, float(np.mean(np.abs(a - b)))


def compare(trace: Trace, ar: Trace, image=None, ar_image=None) -> Paired:
    """The paired measures of `trace` against AR's trace under the same keyed noise (ValueError when the two runs
    do not share their noise: `comparable`). Images (decoded tokens, uint8 arrays) give the pixel measures."""
    why = comparable(trace, ar)
    if why:
        raise ValueError(why)
    changed = changed_positions(_tokens(trace), _tokens(ar))
    psnr, mad = pixel_diff(image, ar_image) if image is not None and ar_image is not None else (None, None)
    return Paired(trace.method, changed, changed[0] if changed else None, changed[1:], psnr, mad)


def _tokens(t: Trace) -> list:
    """The committed tokens in raster order (a finished trace's list; a growing one's decided prefix)."""
    if t.tokens:
        return list(t.tokens)
    com = t.committing()
    out = []
    while len(out) in com:
        out.append(com[len(out)][1].token)
    return out


def changed_category(trace: Trace, ar: Trace) -> np.ndarray:
    """(H, W): SAME, FIRST (the first departure) or DOWNSTREAM (a changed token after it); NaN where either run has
    not decided the position."""
    h, w = trace.grid
    mine, theirs = _tokens(trace), _tokens(ar)
    out = np.full(h * w, np.nan)
    n = min(len(mine), len(theirs))
    out[:n] = SAME
    changed = changed_positions(mine, theirs)
    if changed:
        out[list(changed)] = DOWNSTREAM
        out[changed[0]] = FIRST
    return out.reshape(h, w)


def against_ar(traces: dict) -> dict:
    """method -> its changed-token count against the race's own AR lane, for every finished trace that shares AR's
    keyed noise (AR itself included, 0); methods that cannot be compared are left out. Empty without a finished,
    keyed AR trace in `traces`."""
    ar = traces.get("ar")
    if ar is None or not ar.tokens:
        return {}
    return {m: len(changed_positions(list(t.tokens), list(ar.tokens))) for m, t in traces.items()
            if t.tokens and comparable(t, ar) is None}


def vs_ar_words(method: str, changed: int | None) -> str:
    """A lane's word on AR's image of the same race, in plain text (the lane header, the video, the slide): "identical
    to AR ✓" or "N tokens changed vs AR"; '' for AR itself and when nothing was compared (changed None)."""
    if changed is None or method == "ar":
        return ""
    if changed == 0:
        return "identical to AR ✓"
    return f"{changed} token{'s' if changed != 1 else ''} changed vs AR"
