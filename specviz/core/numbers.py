"""The number checks every edge shares (trace files, knob values, the app's inputs) and the standard error the
measuring loops report: one definition each."""
from __future__ import annotations

import math
import statistics


def finite_number(v) -> bool:
    """An int or float (never a bool) that is neither NaN nor infinite."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def whole_number(v, lo: int, hi: int) -> bool:
    """An int (never a bool) in [lo, hi]."""
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def gib(n: int) -> str:
    """'1.23 GiB' (two decimals; 1 GiB = 2**30 bytes)."""
    return f"{n / 2**30:.2f} GiB"


def standard_error(values) -> float:
    """The standard error of a mean over per-image values: stdev / √n (0.0 for one value)."""
    v = list(values)
    return statistics.stdev(v) / len(v) ** 0.5 if len(v) > 1 else 0.0
