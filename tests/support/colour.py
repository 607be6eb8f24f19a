"""CIEDE2000 colour difference (Sharma, Wu & Dalal 2005, the formula as published) and colour-vision-deficiency
simulation through colorspacious (Machado et al. 2009 at severity 100: dichromacy), for the palette check."""
from __future__ import annotations

import itertools
import math

import numpy as np
from colorspacious import cspace_convert

SIMULATIONS = {"normal vision": None, "deuteranopia": "deuteranomaly", "protanopia": "protanomaly",
               "tritanopia": "tritanomaly"}


def delta_e2000(lab1, lab2) -> float:
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean ** 7 / (c_mean ** 7 + 25 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dl, dc = l2 - l1, c2p - c1p
    dh = 0.0 if c1p * c2p == 0 else (h2p - h1p + 180) % 360 - 180
    dhh = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    lm, cm = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        hm = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        hm = (h1p + h2p) / 2
    else:
        hm = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(hm - 30)) + 0.24 * math.cos(math.radians(2 * hm))
         + 0.32 * math.cos(math.radians(3 * hm + 6)) - 0.20 * math.cos(math.radians(4 * hm - 63)))
    rc = 2 * math.sqrt(cm ** 7 / (cm ** 7 + 25 ** 7))
    rt = -math.sin(math.radians(60 * math.exp(-((hm - 275) / 25) ** 2))) * rc
    sl = 1 + 0.015 * (lm - 50) ** 2 / math.sqrt(20 + (lm - 50) ** 2)
    sc, sh = 1 + 0.045 * cm, 1 + 0.015 * cm * t
    return math.sqrt((dl / sl) ** 2 + (dc / sc) ** 2 + (dhh / sh) ** 2 + rt * (dc / sc) * (dhh / sh))


def lab(rgb, simulation: str | None) -> np.ndarray:
    """CIELab (D65) of an sRGB 0-255 colour as seen under `simulation` (a colorspacious cvd_type, None: as is)."""
    x = np.asarray(rgb, float) / 255
    if simulation:
        x = np.clip(cspace_convert(x, {"name": "sRGB1+CVD", "cvd_type": simulation, "severity": 100}, "sRGB1"), 0, 1)
    return cspace_convert(x, "sRGB1", "CIELab")


def closest_pair(colours, simulation: str | None) -> tuple[float, int, int]:
    """(the smallest CIEDE2000 between two of `colours` under `simulation`, their indices)."""
    labs = [lab(c, simulation) for c in colours]
    return min((delta_e2000(labs[i], labs[j]), i, j) for i, j in itertools.combinations(range(len(colours)), 2))
