"""The atlas against AR under the same keyed noise (docs/atlas.md, docs/methods.md §9): per row the paired measures
of analysis/paired.py (tokens changed, the first changed position, PSNR and mean |pixel difference| against AR's
image of the same prompt and seed), per method their means with standard errors over images and the map of where
tokens changed. Rows of the papers' noise carry none of it and the atlas then has no `paired` entry. Pure."""
from __future__ import annotations

import math
import statistics

import numpy as np

from specviz.analysis.paired import Paired
from specviz.core.numbers import standard_error

ROW_KEYS = ("changed", "first_changed", "psnr", "mean_abs", "changed_positions")
# the summary per method: (key, what it is); means over images with their standard errors (stdev/√n) beside them
SUMMARY = (("images", "images compared with AR's image of the same prompt and seed"),
           ("changed", "tokens changed vs AR, mean per image"),
           ("identical_share", "share of images identical to AR's, token for token"),
           ("first_changed", "first changed position (raster index), mean over the changed images"),
           ("changed_images", "images with at least one changed token"),
           ("psnr", "PSNR against AR's image in dB, mean over the images whose pixels differ from AR's"),
           ("mean_abs", "mean absolute pixel difference against AR's image (0-255), mean per image"))
WITH_SE = ("changed", "first_changed", "psnr", "mean_abs")


def row_fields(p: Paired | None) -> dict:
    """A row's paired fields ({} when nothing was compared); an identical image's PSNR (infinite) is null."""
    if p is None:
        return {}
    return {"changed": p.count, "first_changed": p.first,
            "psnr": None if p.psnr is None or math.isinf(p.psnr) else p.psnr, "mean_abs": p.mean_abs,
            "changed_positions": list(p.changed)}


def keyed(rows: list[dict]) -> bool:
    """Whether every row carries the paired measures (an atlas run under keyed noise)."""
    return bool(rows) and all("changed" in r for r in rows)


def _mean_se(values: list) -> tuple:
    return (None, None) if not values else (float(statistics.mean(values)), float(standard_error(values)))


def summary(rows: list[dict]) -> dict:
    """One method's paired summary (SUMMARY's keys, `<key>_se` beside those in WITH_SE)."""
    changed = [r for r in rows if r["changed"]]
    out = {"images": len(rows), "identical_share": (len(rows) - len(changed)) / len(rows),
           "changed_images": len(changed)}
    for k, among in (("changed", rows), ("first_changed", changed), ("psnr", rows), ("mean_abs", rows)):
        out[k], out[f"{k}_se"] = _mean_se([r[k] for r in among if r[k] is not None])
    return out


def changed_map(rows: list[dict]) -> list:
    """(H, W): per position the share of images whose token there differs from AR's."""
    h, w = rows[0]["grid"]
    hits = np.zeros(h * w)
    for r in rows:
        hits[r["changed_positions"]] += 1
    return (hits / len(rows)).reshape(h, w).tolist()


def markdown(atlas: dict, digits: int = 2) -> str:
    """The paired table (mean ± SE per method); '' for an atlas without paired measures."""
    if "paired" not in atlas:
        return ""
    def cell(s, k):
        v = s[k]
        if v is None:
            return ""
        if k in WITH_SE:
            return f"{v:.{digits}f} ± {s[k + '_se']:.{digits}f}"
        return f"{v:.{digits}f}" if isinstance(v, float) else str(v)
    lines = ["| method | " + " | ".join(t for _, t in SUMMARY) + " |", "|---" * (len(SUMMARY) + 1) + "|"]
    lines += ["| " + " | ".join([m] + [cell(s, k) for k, _ in SUMMARY]) + " |" for m, s in atlas["paired"].items()]
    return "\n".join(lines)
