"""The sweep's trade-off, computed: one Point per sweep row (step compression against a quality cost), the Pareto
front of the swept points, where neighbouring points cannot be told apart within their standard errors, and the
measures that do not move across the sweep. render/pareto.py draws the `Plot` record this module builds."""
from __future__ import annotations

from dataclasses import dataclass

from specviz.analysis.cards import cards, symbol

MEASURES = {"implausible": "implausible codes per image (target q < 0.001; bars: ±1 standard error)",
            "nll": "target NLL (nats/token)",
            "tv_cost": "Σ per-token TV cost (bound on the image's TV)",
            "changed": "tokens changed vs AR per image (same keyed noise; bars: ±1 standard error, paired)",
            "psnr": "PSNR vs AR's image in dB (same keyed noise; mean over the images that differ; bars: ±1 standard "
                    "error)"}
PAIRED = ("changed", "psnr")            # measures against AR's image of the same caption and seed: keyed noise only
HIGHER = frozenset({"psnr"})            # measures where higher is better (the front keeps the highest)


@dataclass(frozen=True)
class Point:
    label: str
    x: float                    # step compression
    y: float                    # the chosen cost
    method: str
    reference: bool             # AR or a lossless method (not part of the sweep's front)
    se: float = 0.0             # standard error of y from the per-image values (0: the rows carry none)


@dataclass(frozen=True, kw_only=True)
class Plot:
    """What the trade-off plot draws, every number decided here."""
    points: tuple               # Point per row (y = 0 when the measure is flat)
    ylabel: str                 # the y axis's words ("" when the measure is flat: no axis)
    bars: tuple                 # (x, y, se) of each row that carries a standard error
    runs: tuple                 # the front's pieces of two points or more, each fastest first
    notes: tuple                # the title's sentences (flat measures, points that cannot be ranked)


def separable(a: Point, b: Point) -> bool:
    """The two points' costs differ by more than their combined standard error, sqrt(se_a² + se_b²)."""
    return abs(a.y - b.y) > (a.se ** 2 + b.se ** 2) ** 0.5


def front_runs(line: list[Point]) -> list[list[Point]]:
    """The front cut wherever two neighbouring points cannot be told apart (not separable): the pieces to draw."""
    runs: list[list[Point]] = []
    for p in line:
        if runs and separable(runs[-1][-1], p):
            runs[-1].append(p)
        else:
            runs.append([p])
    return runs


def unranked(pts: list[Point]) -> list[tuple[Point, Point]]:
    """Neighbouring swept points (in step compression) whose costs the sweep cannot tell apart."""
    sweep = sorted((p for p in pts if not p.reference), key=lambda p: p.x)
    return [(a, b) for a, b in zip(sweep, sweep[1:]) if not separable(a, b)]


def points(rows: list[dict], measure: str, lossless: frozenset = frozenset()) -> list[Point]:
    """One Point per sweep row that carries `measure` (rows as `bench.read_rows` gives them)."""
    out = []
    for r in rows:
        if measure not in r["result"]:
            continue
        knobs = ", ".join(f"{symbol(k)}={_fmt(v)}" for k, v in r["point"].items())
        ref = r["method"] == "ar" or r["method"] in lossless
        out.append(Point(f"{r['method']} {knobs}".strip() if ref or not knobs else knobs,
                         float(r["result"]["step_compression"]), float(r["result"][measure]), r["method"], ref,
                         float(r["result"].get(f"{measure}_se", 0.0))))
    return out


def front(pts: list[Point], higher: bool = False) -> list[Point]:
    """The swept points no other swept point beats on both axes (faster and no costlier, or as fast and cheaper;
    `higher`: the measure is better high, as PSNR), fastest first."""
    sweep = [p for p in pts if not p.reference]
    s = -1.0 if higher else 1.0
    keep = [p for p in sweep if not any((q.x > p.x and s * q.y <= s * p.y) or (q.x >= p.x and s * q.y < s * p.y)
                                        for q in sweep)]
    return sorted(keep, key=lambda p: -p.x)


def flat(values: list[float]) -> bool:
    """No movement across the sweep (equal up to float noise)."""
    return len(values) > 1 and max(values) - min(values) <= 1e-9 * max(1.0, max(abs(v) for v in values))


def lossless_methods() -> frozenset:
    """The registered lossless methods besides AR: the plot's reference points (asked of the cards)."""
    return cards().lossless()


def plot(rows: list[dict], measure: str = "implausible", lossless: frozenset | None = None) -> Plot:
    """The trade-off plot of sweep rows under `measure` (`lossless`: the reference methods besides AR; default the
    registry's lossless methods)."""
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {', '.join(MEASURES)}")
    pts = points(rows, measure, lossless_methods() if lossless is None else lossless)
    notes = [noise_words(rows)]
    missing = [r for r in rows if measure not in r["result"]]
    for why in dict.fromkeys(_why(measure, r) for r in missing):
        notes.append(f"not drawn ({why}): {', '.join(_label(r) for r in missing if _why(measure, r) == why)}")
    notes += [f"{MEASURES[k].split(' (')[0]} = {_fmt(vals[0])} at every point" for k in MEASURES
              if flat(vals := [float(r["result"][k]) for r in rows if k in r["result"]])]
    still = flat([p.y for p in pts])
    if still:
        pts = [Point(p.label, p.x, 0.0, p.method, p.reference, p.se) for p in pts]
    bars = tuple((float(r["result"]["step_compression"]), float(r["result"][measure]), r["result"][f"{measure}_se"])
                 for r in rows if f"{measure}_se" in r["result"])
    runs = tuple(tuple(r) for r in front_runs(front(pts, measure in HIGHER) if not still else []) if len(r) > 1)
    if (close := unranked(pts)) and not still:
        pairs = len([p for p in pts if not p.reference]) - 1
        notes.append(f"{len(close)} of {pairs} neighbouring pairs of points lie within their standard errors "
                     "and cannot be ranked (more prompts or seeds)")
    better = "higher" if measure in HIGHER else "lower"
    return Plot(points=tuple(pts), ylabel="" if still else f"{MEASURES[measure]}, {better} is better", bars=bars,
                runs=runs, notes=tuple(notes))


def noise_of(rows: list[dict]) -> str:
    """The noise the rows ran with ("papers", "keyed", or both joined by ' and ' for a file that mixes them)."""
    kinds = sorted({r.get("base", {}).get("noise", "papers") for r in rows})
    return " and ".join(kinds)


def noise_words(rows: list[dict]) -> str:
    """The title's first sentence: the noise of the run."""
    kind = noise_of(rows)
    if kind == "keyed":
        return "keyed noise (every method shares AR's draws for each caption and seed)"
    return "papers' noise (each method draws its own)" if kind == "papers" else f"{kind} noise (rows mixed)"


def _why(measure: str, row: dict) -> str:
    """Why a row has no value of `measure`."""
    if measure == "psnr" and row["result"].get("psnr_images") == 0:
        return "identical to AR's image at every caption, PSNR infinite"
    return "no keyed pairing with AR" if measure in PAIRED and "changed" not in row["result"] else "not measured"


def _label(r: dict) -> str:
    return f"{r['method']} {', '.join(f'{symbol(k)}={_fmt(v)}' for k, v in r['point'].items())}".strip()


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float | int) else str(v)
