"""Acceleration atlas: where acceleration concentrates, over many images (pure functions, no model).

`record` turns one finished run into a compact row (one number per grid position per field: what the aggregation
needs, not the trace); `aggregate` turns rows into the atlas:

- maps: per method, the mean over runs of each position's finalize step / (target forwards - 1) (0 = prefill, 1 = the
  last forward), the share of runs in which the position was committed by an exactly accepted / relaxed draft / a
  resampled token, and the mean relaxation TV cost TV(o, q);
- binned: per method, acceptance (share of positions committed by an accepted draft, exact or relaxed), relaxation
  (share committed by a relaxed draft) and mean TV cost, binned by the target's entropy at commit (deciles of H(q)
  in nats pooled over all positions of all methods' runs), by patch detail (core/detail.py's classes of the position's
  decoded patch of the final image: the one definition the bench and the model card bin by too) and, when
  the rows have regions, by region class (sky / ground / object, from the region head);
- headline: per method, the shares that say where relaxation, rejection and CASCADE groups fall, next to their
  base rates.
"""
from __future__ import annotations

import numpy as np

from specviz.analysis import atlas_paired, views
from specviz.analysis.atlas_keys import MAP_KEYS, METRICS
from specviz.core.detail import DETAIL_CLASSES, DETAIL_EDGES, detail_class, patch_detail
from specviz.core.records import DECISIONS
from specviz.core.trace import Trace
from specviz.engine import registry
from specviz.scenes.regions import OBJECT, REGIONS

_EXACT, _RELAXED, _RESAMPLED = (DECISIONS.index(d) for d in ("exact", "relaxed", "resampled"))
TV_FLOOR = 1e-6                         # a mean TV cost per token below this is float32 noise (lossless rules)
FIELDS = ("finalize", "decision", "entropy", "tv_cost", "rejections", "group", "detail")


def record(trace: Trace, image: np.ndarray, regions=None, vs_ar=None, **meta) -> dict:
    """One finished run -> a JSON row: per position (raster order) the committing step, decision index, H(q) and
    TV cost of the committing event, rejected drafts there, the CASCADE group category (-1 none judged, 0 no group,
    1 I, 2 C, 3 both), the patch detail and (optional) the region class; under keyed noise the paired measures
    against AR (`vs_ar`, a paired.Paired: atlas_paired.row_fields)."""
    n = trace.grid[0] * trace.grid[1]
    com = trace.committing()
    if len(com) != n:
        raise ValueError(f"the atlas needs finished runs: {len(com)} of {n} positions committed")
    rejections = np.zeros(n, int)
    for _, ev in trace.events():
        rejections[ev.pos] += ev.decision == "rejected"
    groups = views.group_category(views.group_cells(trace), trace.grid).reshape(-1)
    row = {"method": trace.method, "model": trace.model, "grid": list(trace.grid), "forwards": len(trace.steps),
           "finalize": [com[p][0] for p in range(n)], "decision": [DECISIONS.index(com[p][1].decision)
                                                                  for p in range(n)],
           "entropy": [com[p][1].entropy for p in range(n)], "tv_cost": [com[p][1].tv_cost for p in range(n)],
           "rejections": rejections.tolist(), "group": np.nan_to_num(groups, nan=-1).astype(int).tolist(),
           "detail": patch_detail(image, trace.grid).reshape(-1).tolist(),
           "region": None if regions is None else np.asarray(regions).reshape(-1).astype(int).tolist()}
    return row | atlas_paired.row_fields(vs_ar) | meta


def spec(row: dict) -> str:
    """The row's method spec ('csd' or 'csd:lam=1'); its method name when it has none."""
    return row["spec"] if "spec" in row else row["method"]


def key(row: dict) -> str:
    """What makes a row unique in a JSONL file: method spec, prompt, seed (and the noise, when keyed)."""
    return f"{spec(row)}|{row['prompt']}|{row['seed']}" + ("|keyed" if row.get("noise") == "keyed" else "")


def entropy_edges(rows: list[dict]) -> np.ndarray:
    """The 9 inner decile edges of H(q) at commit, pooled over every position of every row."""
    return np.quantile(np.concatenate([r["entropy"] for r in rows]), np.arange(1, 10) / 10)


def entropy_bin(entropy, edges) -> np.ndarray:
    """Decile index 0..9: the number of edges at or below the value."""
    return np.searchsorted(edges, np.asarray(entropy, float), side="right")


def _cat(rows: list[dict], name: str) -> np.ndarray:
    return np.concatenate([np.asarray(r[name], float) for r in rows])


def _binned(bins: np.ndarray, n_bins: int, acc, rel, cost) -> dict:
    out = {"count": np.bincount(bins, minlength=n_bins).tolist()}
    for name, v in zip(METRICS, (acc, rel, cost)):
        out[name] = [float(v[bins == b].mean()) if (bins == b).any() else None for b in range(n_bins)]
    return out


def _pct(part: np.ndarray, whole: np.ndarray | None = None):
    """100 * sum(part) / sum(whole) (whole: all ones); None when the denominator is 0."""
    den = float(np.sum(whole)) if whole is not None else float(len(part))
    return None if den == 0 else 100.0 * float(np.sum(part)) / den


def _maps(rows: list[dict]) -> dict:
    h, w = rows[0]["grid"]
    dec = np.stack([r["decision"] for r in rows])
    fin = np.stack([np.asarray(r["finalize"], float) / max(1, r["forwards"] - 1) for r in rows])
    arrays = {"finalize": fin, "exact": dec == _EXACT, "relaxed": dec == _RELAXED, "resampled": dec == _RESAMPLED,
              "tv_cost": np.stack([r["tv_cost"] for r in rows])}
    return {k: arrays[k].mean(0).reshape(h, w).tolist() for k in MAP_KEYS}


def _headline(rows: list[dict], edges: np.ndarray) -> dict:
    dec, cost = _cat(rows, "decision"), _cat(rows, "tv_cost")
    rel = dec == _RELAXED
    low = detail_class(_cat(rows, "detail")) == 0
    upper = entropy_bin(_cat(rows, "entropy"), edges) >= 5
    grouped = _cat(rows, "group") > 0
    rej = _cat(rows, "rejections")
    out = {"images": len(rows), "forwards": float(np.mean([r["forwards"] for r in rows])),
           "accepted_pct": _pct((dec == _EXACT) | rel), "relaxed_pct": _pct(rel),
           "relaxed_low_detail_pct": _pct(rel & low, rel), "low_detail_pct": _pct(low),
           "relaxed_uncertain_pct": _pct(rel & upper, rel), "uncertain_pct": _pct(upper),
           "tv_cost_low_detail_pct": _pct(cost * low, cost) if cost.mean() > TV_FLOOR else None,
           "rejected": int(rej.sum()),
           "grouped_pct": _pct(grouped), "grouped_low_detail_pct": _pct(grouped & low, grouped)}
    has_regions = all(r.get("region") is not None for r in rows)
    obj = _cat(rows, "region") == OBJECT if has_regions else None
    out |= {"rejected_on_object_pct": _pct(rej * obj, rej) if has_regions else None,
            "object_pct": _pct(obj) if has_regions else None,
            "relaxed_on_object_pct": _pct(rel & obj, rel) if has_regions else None,
            "grouped_on_object_pct": _pct(grouped & obj, grouped) if has_regions else None}
    return out


def by_method(rows: list[dict]) -> dict[str, list[dict]]:
    out: dict = {}
    for r in rows:
        out.setdefault(spec(r), []).append(r)
    return out


def aggregate(rows: list[dict]) -> dict:
    """The atlas of `rows` (JSON-ready; None where a bin or denominator is empty)."""
    if not rows:
        raise ValueError("no runs to aggregate")
    groups = by_method(rows)
    edges = entropy_edges(rows)
    has_regions = all(r.get("region") is not None for r in rows)
    binned = {}
    for m, rs in groups.items():
        dec, cost = _cat(rs, "decision"), _cat(rs, "tv_cost")
        acc, rel = ((dec == _EXACT) | (dec == _RELAXED)).astype(float), (dec == _RELAXED).astype(float)
        binned[m] = {"entropy": _binned(entropy_bin(_cat(rs, "entropy"), edges), 10, acc, rel, cost),
                     "detail": _binned(detail_class(_cat(rs, "detail")), 3, acc, rel, cost)}
        if has_regions:
            binned[m]["region"] = _binned(_cat(rs, "region").astype(int), len(REGIONS), acc, rel, cost)
    out = {"methods": list(groups), "images": {m: len(rs) for m, rs in groups.items()},
           "model": rows[0]["model"], "grid": rows[0]["grid"],
           "entropy_edges": edges.tolist(), "detail_edges": list(DETAIL_EDGES),
           "bins": {"entropy": [f"D{i + 1}" for i in range(10)], "detail": list(DETAIL_CLASSES),
                    **({"region": list(REGIONS)} if has_regions else {})},
           "maps": {m: _maps(rs) for m, rs in groups.items()}, "binned": binned,
           "headline": {m: _headline(rs, edges) for m, rs in groups.items()}}
    if atlas_paired.keyed(rows):                   # keyed noise: each run against AR's image (docs/methods.md §9)
        out["paired"] = {m: atlas_paired.summary(rs) for m, rs in groups.items()}
        for m, rs in groups.items():
            out["maps"][m]["changed"] = atlas_paired.changed_map(rs)
    return out


# the headline table: (key, column header); shares are percentages
HEADLINE = (("images", "images"), ("forwards", "target forwards"), ("accepted_pct", "accepted %"),
            ("relaxed_pct", "relaxed %"), ("relaxed_low_detail_pct", "relaxed in low detail %"),
            ("low_detail_pct", "all in low detail %"), ("relaxed_uncertain_pct", "relaxed in upper H half %"),
            ("uncertain_pct", "all in upper H half %"), ("tv_cost_low_detail_pct", "TV cost in low detail %"),
            ("rejected", "rejected drafts"), ("rejected_on_object_pct", "rejected on objects %"),
            ("relaxed_on_object_pct", "relaxed on objects %"), ("object_pct", "all on objects %"),
            ("grouped_pct", "grouped %"), ("grouped_low_detail_pct", "grouped in low detail %"),
            ("grouped_on_object_pct", "grouped on objects %"))


def headline_rows(atlas: dict, digits: int = 1) -> list[list]:
    """[method, value per HEADLINE column] with values rounded for display ('' for none)."""
    def fmt(v):
        return "" if v is None else (v if isinstance(v, int) else round(v, digits))
    return [[m, *(fmt(h[k]) for k, _ in HEADLINE)] for m, h in atlas["headline"].items()]


def markdown(atlas: dict) -> str:
    lines = ["| method | " + " | ".join(t for _, t in HEADLINE) + " |", "|---" * (len(HEADLINE) + 1) + "|"]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in headline_rows(atlas)]
    return "\n".join(lines)


def _checked(atlas: dict) -> list:
    """[(Claim, its headline row, True / False / None)] for every claim of a method in the atlas (the method
    records' `claims`), in the catalogue's order."""
    out = []
    for m in registry.REGISTRY.values():
        h = atlas["headline"].get(m.name)
        for c in m.claims:
            if h and h[c.gate] and h[c.part] is not None and h[c.base] is not None:
                a, b = (h[c.part], h[c.base]) if c.higher else (h[c.base], h[c.part])
                out.append((c, h, None if a == b else a > b))
    return out


def claims(atlas: dict) -> dict:
    """The papers' claims as checks on the atlas: True / False, None when the two shares are equal (no contrast,
    e.g. every patch is low-detail); a claim is absent when its method is missing or has nothing to check.
    CSD relaxes more where the target is uncertain (upper entropy half) and where detail is low than in general;
    CASCADE's groups gather in low-detail patches and off objects more than tokens in general."""
    return {c.key: ok for c, _, ok in _checked(atlas)}


def claims_markdown(atlas: dict) -> str:
    """One line per checked claim: holds / does not hold, with the two shares compared."""
    lines = []
    for c, h, ok in _checked(atlas):
        noun = "relaxed tokens" if c.part.startswith("relaxed") else "grouped tokens"
        verdict = "cannot tell (equal shares)" if ok is None else ("holds" if ok else "does not hold")
        lines.append(f"- {c.text}: **{verdict}** ({h[c.part]:.1f} % of {noun} vs "
                     f"{h[c.base]:.1f} % of all tokens {c.where})")
    return "\n".join(lines) or "- (no csd or cascade runs with relaxation or groups to check the claims on)"
