"""The sweep's trade-off plot, drawn: step compression (x, higher is faster) against a quality cost that moves with
relaxation (y, lower is better), each point labelled without overlap, AR and the lossless methods as reference markers,
the Pareto front as a line. What is drawn is decided in analysis/front.py (its `Plot` record: the points, the front's
pieces, the standard errors, the notes); a measure that does not move is stated in the title, not drawn. Shared by the
app's Sweep tab and `python -m specviz sweep`."""
from __future__ import annotations

import textwrap

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

OFFSETS = [(8, 6), (8, -16), (-8, 6), (-8, -16), (0, 14), (0, -22)]      # label candidates around a point, in pt


def figure(plot, size=(8, 5)) -> Figure:
    """The plot of an analysis.front.Plot."""
    pts = list(plot.points)
    fig = Figure(figsize=size, dpi=120, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_xlabel("step compression (tokens per target forward, higher is faster)")
    if not plot.ylabel:
        ax.set_yticks([])
        ax.set_ylabel("(flat)")
    else:
        ax.set_ylabel("\n".join(textwrap.wrap(plot.ylabel, 48)))     # a long measure in lines: never cut
    sweep = [p for p in pts if not p.reference]
    ax.scatter([p.x for p in sweep], [p.y for p in sweep], c="tab:blue", s=36, zorder=3, label="swept points")
    for p in pts:
        if p.reference:
            ax.scatter([p.x], [p.y], marker="*" if p.method == "ar" else "D", s=110 if p.method == "ar" else 50,
                       c="black" if p.method == "ar" else "tab:gray", zorder=3,
                       label="AR" if p.method == "ar" else f"{p.method} (lossless)")
    for x, y, se in plot.bars:         # paired standard errors where the rows carry them (keyed sweeps)
        ax.errorbar(x, y, yerr=se, fmt="none", ecolor="tab:blue", elinewidth=1, capsize=3, zorder=2)
    for i, run in enumerate(plot.runs):                                 # only where costs differ beyond errors
        ax.plot([p.x for p in run], [p.y for p in run], "-", c="tab:red", lw=2, zorder=2,
                label="Pareto front" if i == 0 else None)
    ax.margins(0.18)
    ax.legend(loc="best", fontsize=9)
    if plot.notes:
        ax.set_title("\n".join(textwrap.wrap("; ".join(plot.notes), 110)), fontsize=9, loc="left")   # never cut
    place_labels(fig, ax, pts)
    return fig


def place_labels(fig: Figure, ax, pts: list) -> list:
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
