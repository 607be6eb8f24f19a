"""The sweep's trade-off plot: step compression (x, higher is faster) against a quality cost that moves with
relaxation (y, lower is better: implausible codes per image by default, target NLL or Σ TV cost on request), each
point labelled without overlap, AR and the lossless methods as reference markers, the Pareto front as a line. A
measure that does not move across the sweep is stated as a number in the title instead of being drawn as a line.
Shared by the app's Sweep tab and `python -m specviz sweep`."""
from __future__ import annotations

from dataclasses import dataclass

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from specviz.engine.methods import REGISTRY, knob

MEASURES = {"implausible": "implausible codes per image (target q < 0.001; bars: ±1 standard error)",
            "nll": "target NLL (nats/token)",
            "tv_cost": "Σ per-token TV cost (bound on the image's TV)",
            "changed": "tokens changed vs AR per image (same keyed noise; bars: ±1 standard error, paired)"}
OFFSETS = [(8, 6), (8, -16), (-8, 6), (-8, -16), (0, 14), (0, -22)]      # label candidates around a point, in pt


@dataclass(frozen=True)
class Point:
    label: str
    x: float                    # step compression
    y: float                    # the chosen cost
    method: str
    reference: bool             # AR or a lossless method (not part of the sweep's front)
    se: float = 0.0             # standard error of y from the per-image values (0: the rows carry none)


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
    """One Point per sweep row (rows as `bench.read_rows` gives them)."""
    out = []
    for r in rows:
        knobs = ", ".join(f"{symbol(k)}={_fmt(v)}" for k, v in r["point"].items())
        ref = r["method"] == "ar" or r["method"] in lossless
        out.append(Point(f"{r['method']} {knobs}".strip() if ref or not knobs else knobs,
                         float(r["result"]["step_compression"]), float(r["result"][measure]), r["method"], ref,
                         float(r["result"].get(f"{measure}_se", 0.0))))
    return out


def front(pts: list[Point]) -> list[Point]:
    """The swept points no other swept point beats on both axes (faster and no costlier, or as fast and cheaper),
    fastest first."""
    sweep = [p for p in pts if not p.reference]
    keep = [p for p in sweep if not any((q.x > p.x and q.y <= p.y) or (q.x >= p.x and q.y < p.y) for q in sweep)]
    return sorted(keep, key=lambda p: -p.x)


def flat(values: list[float]) -> bool:
    """No movement across the sweep (equal up to float noise)."""
    return len(values) > 1 and max(values) - min(values) <= 1e-9 * max(1.0, max(abs(v) for v in values))


def figure(rows: list[dict], measure: str = "implausible", lossless: frozenset | None = None,
           size=(8, 5)) -> Figure:
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {', '.join(MEASURES)}")
    if lossless is None:
        lossless = lossless_methods()
    pts = points(rows, measure, lossless)
    fig = Figure(figsize=size, dpi=120, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_xlabel("step compression (tokens per target forward, higher is faster)")
    notes = [f"{MEASURES[k].split(' (')[0]} = {_fmt(vals[0])} at every point" for k in MEASURES
             if flat(vals := [float(r["result"][k]) for r in rows if k in r["result"]])]
    if flat([p.y for p in pts]):
        ax.set_yticks([])
        ax.set_ylabel("(flat)")
        pts = [Point(p.label, p.x, 0.0, p.method, p.reference, p.se) for p in pts]
    else:
        ax.set_ylabel(MEASURES[measure] + ", lower is better")
    sweep = [p for p in pts if not p.reference]
    ax.scatter([p.x for p in sweep], [p.y for p in sweep], c="tab:blue", s=36, zorder=3, label="swept points")
    for p in pts:
        if p.reference:
            ax.scatter([p.x], [p.y], marker="*" if p.method == "ar" else "D", s=110 if p.method == "ar" else 50,
                       c="black" if p.method == "ar" else "tab:gray", zorder=3,
                       label="AR" if p.method == "ar" else f"{p.method} (lossless)")
    for r in rows:                     # paired standard errors where the rows carry them (keyed sweeps)
        if f"{measure}_se" in r["result"]:
            ax.errorbar(float(r["result"]["step_compression"]), float(r["result"][measure]),
                        yerr=r["result"][f"{measure}_se"], fmt="none", ecolor="tab:blue", elinewidth=1, capsize=3,
                        zorder=2)
    line = front(pts) if not flat([p.y for p in pts]) else []
    for i, run in enumerate(r for r in front_runs(line) if len(r) > 1):     # only where costs differ beyond errors
        ax.plot([p.x for p in run], [p.y for p in run], "-", c="tab:red", lw=2, zorder=2,
                label="Pareto front" if i == 0 else None)
    if (close := unranked(pts)) and not flat([p.y for p in pts]):
        notes.append(f"{len(close)} of {len([p for p in pts if not p.reference]) - 1} neighbouring points lie within "
                     "their standard errors and cannot be ranked (more prompts or seeds)")
    ax.margins(0.18)
    ax.legend(loc="best", fontsize=9)
    if notes:
        ax.set_title("; ".join(notes), fontsize=9, loc="left")
    place_labels(fig, ax, pts)
    return fig


def place_labels(fig: Figure, ax, pts: list[Point]) -> list:
    """Annotate every point at the first offset whose box overlaps no earlier label and no marker."""
    r = fig.canvas.get_renderer()
    fig.draw(r)                                  # settle the constrained layout before measuring boxes
    marks = [ax.transData.transform((p.x, p.y)) for p in pts]
    placed, out = [], []
    for p in pts:
        for ring in range(1, 6):
            for dx, dy in OFFSETS:
                t = ax.annotate(p.label, (p.x, p.y), xytext=(dx * ring, dy * ring), textcoords="offset points",
                                fontsize=8, ha="left" if dx >= 0 else "right", zorder=4)
                box = t.get_window_extent(r)
                hits = any(box.overlaps(b) for b in placed) or any(
                    box.x0 - 4 <= mx <= box.x1 + 4 and box.y0 - 4 <= my <= box.y1 + 4 for mx, my in marks)
                if not hits:
                    break
                t.remove()
            else:
                continue
            break
        else:                                    # nothing free nearby: the last candidate, still readable
            t = ax.annotate(p.label, (p.x, p.y), xytext=(8, 6), textcoords="offset points", fontsize=8, zorder=4)
            box = t.get_window_extent(r)
        placed.append(box)
        out.append(t)
    return out


def lossless_methods() -> frozenset:
    """The registered lossless methods besides AR: the plot's reference points (asked of the records)."""
    return frozenset(m.name for m in REGISTRY.values() if m.lossless and m.name != "ar")


def symbol(knob_name: str) -> str:
    """The knob as the app writes it (λ, δ, τ_pos, ...; its name when it has no symbol), asked of its record."""
    return knob(knob_name).sym


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float | int) else str(v)
