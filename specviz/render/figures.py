"""Matplotlib figures through the Figure API only (no pyplot in a server, docs/design.md §8.5): the accepted-length
histogram, a slide figure laying out each method's image and maps, exportable as PNG and PDF, and the sweep's
Pareto plot."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from specviz.analysis import views
from specviz.core.trace import DECISIONS
from specviz.render import charts, draw

SLIDE_MAPS = ("entropy", "tv", "decision", "finalize", "tv_cost")


def histogram_image(traces: dict):
    """Grouped bars: how many verification steps committed k tokens, per method (summary['accepted_hist']).
    Drawn with PIL (charts.bar_chart): a matplotlib figure cost ~0.3 s per run to draw and encode in the server."""
    hists = {m: list(t.summary.get("accepted_hist", [0])) for m, t in traces.items()}
    return charts.bar_chart(hists, "Accepted length per target forward", "tokens committed by one verification step",
                            "steps")


def slide_figure(traces: dict, images: dict, prompt: str = "") -> Figure:
    """Rows = methods; columns = final image, then the maps with one shared colour scale per column."""
    cols = 1 + len(SLIDE_MAPS)
    fig = Figure(figsize=(2.1 * cols, 2.1 * len(traces) + 0.9), dpi=150, layout="constrained")
    FigureCanvasAgg(fig)
    axes = np.atleast_2d(fig.subplots(len(traces), cols, squeeze=False))
    arrays = {k: {m: _map(t, k) for m, t in traces.items()} for k in SLIDE_MAPS}
    for r, (m, t) in enumerate(traces.items()):
        s = t.summary
        axes[r, 0].imshow(images[m], interpolation="nearest")
        axes[r, 0].set_ylabel(f"{m}\n{s.get('target_forwards', '?')} fwd · {s.get('step_compression', 0):.2f}×",
                              fontsize=9)
        for c, k in enumerate(SLIDE_MAPS, start=1):
            im = _draw_map(axes[r, c], k, arrays[k][m], list(arrays[k].values()))
            if r == len(traces) - 1 and im is not None:
                fig.colorbar(im, ax=axes[:, c], location="bottom", shrink=0.8, pad=0.02)
    for c, k in enumerate(("image",) + SLIDE_MAPS):
        axes[0, c].set_title(views.TITLES.get(k, k), fontsize=10)
    for ax in axes.flat:
        ax.set_xticks([]), ax.set_yticks([])
    _decision_legend(fig)
    if prompt:
        fig.suptitle(prompt[:120], fontsize=11, parse_math=False)       # user text: '$' is no mathtext
    return fig


def _map(trace, kind):
    return views.decision_map(trace)[0] if kind == "decision" else views.numeric_map(trace, kind)


def _draw_map(ax, kind, a, column):
    if kind == "decision":
        cmap = ListedColormap(np.array([draw.DECISION_RGB[d] for d in DECISIONS]) / 255)
        cmap.set_bad(np.array(draw.NAN_RGB) / 255)
        ax.imshow(np.ma.masked_invalid(a), cmap=cmap, vmin=-0.5, vmax=len(DECISIONS) - 0.5,
                  interpolation="nearest")
        return None
    spec = views.MAPS[kind]
    lo, hi = views.shared_range(column, spec)
    cmap = ListedColormap(draw.lut(spec.cmap) / 255)
    cmap.set_bad(np.array(draw.NAN_RGB) / 255)
    return ax.imshow(np.ma.masked_invalid(a), cmap=cmap, vmin=lo, vmax=hi, interpolation="nearest")


def _decision_legend(fig):
    handles = [Patch(color=np.array(draw.DECISION_RGB[d]) / 255, label=draw.DECISION_LABEL[d])
               for d in DECISIONS if d != "rejected"]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=8, frameon=False)


def save(fig: Figure, path: str | Path) -> Path:
    """Write a figure (format from the suffix: .png, .pdf, .svg)."""
    fig.savefig(path, bbox_inches="tight")
    return Path(path)


def pareto_figure(rows: list[dict]):
    """Speed (step compression) vs quality (fidelity, else NLL) of sweep points; the Pareto front joined."""
    key = "fidelity" if all("fidelity" in r["result"] for r in rows) else "nll"
    pts = sorted(((r["result"]["step_compression"], r["result"][key], r["point"]) for r in rows),
                 key=lambda t: -t[0])
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.add_subplot()
    ax.scatter([p[0] for p in pts], [p[1] for p in pts], c="tab:blue")
    for x, y, pt in pts:
        ax.annotate(",".join(f"{k}={v}" for k, v in pt.items()) or "ar", (x, y), fontsize=7, alpha=0.7)
    front, best = [], None
    for x, y, _ in pts:                                     # fastest first; keep points that improve quality
        better = best is None or (y > best if key == "fidelity" else y < best)
        if better:
            front.append((x, y))
            best = y
    ax.plot([f[0] for f in front], [f[1] for f in front], "--", c="tab:red", label="Pareto front")
    ax.set_xlabel("step compression (positions / target forwards)")
    ax.set_ylabel("scene fidelity" if key == "fidelity" else "target NLL (nats/token, lower is better)")
    ax.legend()
    return fig
