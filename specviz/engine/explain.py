"""What a method adds to the inspector under the numbers (registry.Method `explain`, `group_reading`): CSD's λ in
the units it runs in, CASCADE's level budget and its group reading. methods.py registers them."""
from __future__ import annotations

import math

from specviz.engine import rules
from specviz.engine.groups import READINGS


def csd_explain(config: dict, e) -> str:
    """CSD's λ in the units it runs in and per nat at this slot (docs/methods.md §3.2): the relaxation is
    λ·g(H/N) with N = log|supp q| (support), log V (vocab) or 1 (raw), so λ per normalised unit = λ/N per nat."""
    lam, norm, shape = float(config.get("lam", 0.0)), config.get("h_norm", "support"), config.get("g", "h")
    gh = rules.csd_g(e.entropy_norm, shape)
    gate = e.tv < float(config.get("delta", 1.0))
    if norm == "raw":
        conv = f"λ = {lam:.3g} per nat (--h-norm raw)"
    elif e.entropy > 0 and e.entropy_norm > 0:
        n = e.entropy / e.entropy_norm                                  # N = log|supp q| or log V at this slot
        what = f"log|supp q| = {n:.3f} (|supp q| = {math.exp(n):.0f})" if norm == "support" else f"log V = {n:.3f}"
        conv = f"λ = {lam:.3g} per unit of H/N ≙ λ/N = {lam / n:.3g} per nat here, N = {what}"
    else:
        conv = f"λ = {lam:.3g} per unit of normalised entropy (H = 0 here: no relaxation)"
    form = "1 − H/N" if shape == "one_minus_h" else "H/N"
    return (f"CSD units: {conv}. Relaxation λ·g = λ·({form}) = {lam * gh:.4f}"
            f"{'' if gate else f' — gate closed, TV(p, q) = {e.tv:.3f} ≥ δ'}.")


def cascade_explain(config: dict, e) -> str:
    """CASCADE's level budget at the deciding candidate (its `groups` extension)."""
    g = e.groups
    if g is None:
        return ""
    return (f"CASCADE budget left for this level δ = {g.budget_left:.4f}; relaxation scale s = {g.scale:.4f}; "
            f"moved to x: {e.moved:.4f}")


def cascade_reading(config: dict) -> str:
    sets = config.get("cascade_sets", "paper")
    return f"{sets} — {READINGS.get(sets, '')}"
