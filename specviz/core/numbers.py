"""The number checks every edge shares (trace files, knob values, the app's inputs): one definition each."""
from __future__ import annotations

import math


def finite_number(v) -> bool:
    """An int or float (never a bool) that is neither NaN nor infinite."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def whole_number(v, lo: int, hi: int) -> bool:
    """An int (never a bool) in [lo, hi]."""
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi
