"""Matplotlib figures through the Figure API only (no pyplot in a server, docs/design.md §8.5): the accepted-length
histogram, a slide figure laying out each method's image and maps, exportable as PNG and PDF, and the sweep's
Pareto plot."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from specviz.analysis import paired, views
from specviz.core.cards import Cards
from specviz.core.records import DECISIONS
from specviz.render import charts, draw

SLIDE_IN = (16, 9)                  # inches: a 16:9 slide (1920 x 1080 px at 120 dpi)
LABEL_PT = 11                       # a row label's font size
BAR_AT = (0.1, -0.16, 0.8, 0.06)    # a colourbar's box under the last row's map, in that map's axes fraction


def histogram_image(traces: dict, cards: Cards):
    """Grouped bars: how many verification steps committed k tokens, per method (summary['accepted_hist']).
    Drawn with PIL (charts.bar_chart): a matplotlib figure cost ~0.3 s per run to draw and encode in the server."""
    drafting = {m: t for m, t in traces.items() if cards.of(m).drafts}
    hists = {m: list(t.summary.get("accepted_hist", [0])) for m, t in drafting.items()}
    left_out = [m for m in traces if m not in drafting]          # AR: every forward commits one token, a lone bar
    note = f" ({', '.join(left_out)} left out: one token per forward)" if left_out else ""
    return charts.bar_chart(hists, "Accepted length per target forward" + note,
                            "tokens committed by one verification step", "verification steps")


def slide_figure(traces: dict, images: dict, prompt: str = "", settings: str = "") -> Figure:
    """A 16:9 slide (16 x 9 in): rows = methods; columns = final image, then the maps with one shared colour scale per
    column, each colourbar labelled with its units; the caption carries the prompt and the settings."""
    specs = slide_maps()
    cols = 1 + len(specs)
    fig = Figure(figsize=SLIDE_IN, dpi=120, layout="constrained")
    FigureCanvasAgg(fig)
    axes = np.atleast_2d(fig.subplots(len(traces), cols, squeeze=False))
    arrays = {sp.key: {m: sp.compute(t, traces) for m, t in traces.items()} for sp in specs}
    labels = row_labels(traces)
    for r, m in enumerate(traces):
        axes[r, 0].imshow(images[m], interpolation="nearest")
        label_row(axes[r, 0], labels[m])
        for c, spec in enumerate(specs, start=1):
            im = _draw_map(axes[r, c], spec, arrays[spec.key][m], list(arrays[spec.key].values()))
            if r == len(traces) - 1 and im is not None:      # under the last row, inside its column's box: the
                cax = axes[r, c].inset_axes(BAR_AT)           # layout keeps the rows aligned (with one row, a bar
                bar = fig.colorbar(im, cax=cax, orientation="horizontal")   # beside the axes shifted its column)
                bar.set_label(spec.colourbar, fontsize=10)
    for c, title in enumerate(("image", *(sp.title for sp in specs))):
        axes[0, c].set_title(title, fontsize=12)
    for ax in axes.flat:
        ax.set_xticks([]), ax.set_yticks([])
    _decision_legend(fig)
    caption = " — ".join(x for x in (prompt[:120], settings) if x)
    if caption:
        fig.suptitle(caption, fontsize=13, parse_math=False)            # user text: '$' is no mathtext
    return fig


def row_labels(traces: dict) -> dict:
    """method -> its row's label: the method, its forwards and step compression, and under keyed noise its word on
    AR's image (paired.vs_ar_words: "identical to AR ✓" / "N tokens changed vs AR")."""
    vs = paired.against_ar(traces)
    out = {}
    for m, t in traces.items():
        s, words = t.summary, paired.vs_ar_words(m, vs.get(m))
        out[m] = (f"{m}\n{s.get('target_forwards', '?')} fwd · {s.get('step_compression', 0):.2f}×"
                  + (f"\n{words}" if words else ""))
    return out


def label_row(ax, text: str) -> None:
    """A row's label, horizontal and right-aligned beside its image (the layout gives it its width): three lines of
    LABEL_PT fit a row of ten on the 16:9 slide, where the rotated label's third line ran into the next row's."""
    ax.set_ylabel(text, fontsize=LABEL_PT, rotation=0, ha="right", va="center", labelpad=10)


def slide_maps() -> tuple:
    """The maps the slide shows, one column each (the records marked `slide`, in views.MAPS order)."""
    return tuple(spec for spec in views.MAPS.values() if spec.slide)


def _draw_map(ax, spec, a, column):
    if spec.drawing == "decision":
        cmap = ListedColormap(np.array([draw.DECISION_RGB[d] for d in DECISIONS]) / 255)
        cmap.set_bad(np.array(draw.NAN_RGB) / 255)
        ax.imshow(np.ma.masked_invalid(a), cmap=cmap, vmin=-0.5, vmax=len(DECISIONS) - 0.5,
                  interpolation="nearest")
        return None
    lo, hi = views.shared_range(column, spec)
    cmap = ListedColormap(draw.lut(spec.cmap) / 255)
    cmap.set_bad(np.array(draw.NAN_RGB) / 255)
    return ax.imshow(np.ma.masked_invalid(a), cmap=cmap, vmin=lo, vmax=hi, interpolation="nearest")


def _decision_legend(fig):
    handles = [Patch(color=np.array(draw.DECISION_RGB[d]) / 255, label=draw.DECISION_LABEL[d])
               for d in DECISIONS if d != "rejected"]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=10, frameon=False)


_DRAWER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="specviz-matplotlib")


def in_one_thread(fn, *args, **kwargs):
    """fn(*args, **kwargs) in the one thread that draws matplotlib figures for the server. matplotlib caches its
    FreeType fonts per thread (font_manager._get_font: 64 entries keyed by thread id, two open font files each), and
    Gradio's worker threads come and go (idle ones exit after 10 s): each export drawn in a new thread kept two more
    open files and their fonts' memory (scripts/soak.py)."""
    return _DRAWER.submit(fn, *args, **kwargs).result()


def save(fig: Figure, path: str | Path) -> Path:
    """Write a figure at its own size (format from the suffix: .png, .pdf, .svg); a slide stays 16:9."""
    fig.savefig(path)
    return Path(path)
