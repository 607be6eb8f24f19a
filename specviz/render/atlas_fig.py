"""Atlas figures through the Figure API (no pyplot): small multiples of the binned metrics, the mean maps per
method and, under keyed noise, the paired measures against AR with their standard errors. Every value drawn is read
from the atlas dict unchanged (tests compare the drawn data with it)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from specviz.analysis.atlas_keys import MAP_KEYS, METRICS
from specviz.analysis.atlas_paired import WITH_SE
from specviz.render import draw, figures

METRIC_LABEL = {"acceptance": "accepted share", "relaxation": "relaxed share", "tv_cost": "mean TV cost"}
BIN_LABEL = {"entropy": "H(q) at commit, pooled deciles",          # detail: formatted with the atlas's own edges
             "detail": "patch detail (pixel std: <{0:g}, {0:g}-{1:g}, ≥{1:g})", "region": "region (region head)"}
MAP_LABEL = {"finalize": "finalize step / forwards", "exact": "accepted exactly", "relaxed": "relaxed",
             "resampled": "resampled", "tv_cost": "TV cost", "changed": "changed vs AR"}
PAIRED_LABEL = {"changed": "tokens changed vs AR", "first_changed": "first changed position\n(changed images)",
                "psnr": "PSNR vs AR [dB]\n(images that differ)", "mean_abs": "mean |pixel diff| vs AR"}


def _colours(methods: list[str]) -> dict:
    cycle = ("tab:gray", "tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink")
    return {m: cycle[i % len(cycle)] for i, m in enumerate(methods)}


def binned_figure(atlas: dict, dpi: int = 110) -> Figure:
    """Rows: acceptance, relaxation, TV cost; columns: by entropy decile, detail tercile, region (when present).
    One line (entropy) or bar group (detail, region) per method; empty bins are gaps."""
    kinds = list(atlas["bins"])
    fig = Figure(figsize=(3.3 * len(kinds), 6.6), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(METRICS), len(kinds), squeeze=False)
    colours = _colours(atlas["methods"])
    width = 0.8 / max(1, len(atlas["methods"]))
    for c, kind in enumerate(kinds):
        labels = atlas["bins"][kind]
        x = np.arange(len(labels))
        for r, metric in enumerate(METRICS):
            ax = axes[r, c]
            for i, m in enumerate(atlas["methods"]):
                y = np.array([np.nan if v is None else v for v in atlas["binned"][m][kind][metric]], float)
                if kind == "entropy":
                    ax.plot(x, y, "o-", ms=3, lw=1.2, color=colours[m], label=m)
                else:
                    ax.bar(x + (i - (len(atlas["methods"]) - 1) / 2) * width, y, width, color=colours[m], label=m)
            ax.set_xticks(x, labels, fontsize=7)
            ax.tick_params(axis="y", labelsize=7)
            ax.spines[["top", "right"]].set_visible(False)
            if c == 0:
                ax.set_ylabel(METRIC_LABEL[metric], fontsize=9)
            if r == len(METRICS) - 1:
                ax.set_xlabel(BIN_LABEL[kind].format(*atlas.get("detail_edges", ())), fontsize=8)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=8, frameon=False)
    n = sum(atlas["images"].values()) // max(1, len(atlas["methods"]))
    fig.suptitle(f"Acceleration atlas · {atlas['model']} · {n} images per method", fontsize=10)
    return fig


def maps_figure(atlas: dict, dpi: int = 110) -> Figure:
    """Rows: methods; columns: MAP_KEYS as mean maps over the runs. Shares and the normalised finalize step use a
    fixed 0..1 scale; TV cost one scale shared by all methods."""
    methods = atlas["methods"]
    keys = map_keys(atlas)
    fig = Figure(figsize=(1.9 * len(keys), 1.9 * len(methods) + 0.8), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(methods), len(keys), squeeze=False)
    top = max(max(max(row) for row in atlas["maps"][m]["tv_cost"]) for m in methods)
    for c, k in enumerate(keys):
        cmap = ListedColormap(draw.lut("inferno" if k == "tv_cost" else "viridis") / 255)
        hi = max(top, 1e-3) if k == "tv_cost" else 1.0
        for r, m in enumerate(methods):
            ax = axes[r, c]
            im = ax.imshow(np.array(atlas["maps"][m][k]), cmap=cmap, vmin=0.0, vmax=hi, interpolation="nearest")
            ax.set_xticks([]), ax.set_yticks([])
            if c == 0:
                ax.set_ylabel(m, fontsize=9)
            if r == 0:
                ax.set_title(MAP_LABEL[k], fontsize=9)
        cb = fig.colorbar(im, ax=axes[:, c], location="bottom", shrink=0.8, pad=0.02)
        cb.ax.tick_params(labelsize=7)
    fig.suptitle(f"Mean maps over {atlas['images'][methods[0]]} runs per method", fontsize=10)
    return fig


def map_keys(atlas: dict) -> tuple:
    """The maps drawn: MAP_KEYS, and "changed" (share of images changed there vs AR) under keyed noise."""
    return MAP_KEYS + (("changed",) if "paired" in atlas else ())


def paired_figure(atlas: dict, dpi: int = 110) -> Figure:
    """One panel per paired measure (WITH_SE): a bar per method at its mean with ±1 standard error (stdev/√n over
    images); an empty mean (no changed image) is no bar."""
    methods = list(atlas["paired"])
    fig = Figure(figsize=(2.6 * len(WITH_SE), 2.8), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(WITH_SE), squeeze=False)[0]
    colours = _colours(atlas["methods"])
    x = np.arange(len(methods))
    for ax, k in zip(axes, WITH_SE):
        s = [atlas["paired"][m] for m in methods]
        y = np.array([np.nan if v[k] is None else v[k] for v in s], float)
        se = np.array([np.nan if v[k] is None else v[k + "_se"] for v in s], float)
        ax.bar(x, y, 0.7, yerr=se, capsize=3, color=[colours[m] for m in methods])
        ax.set_xticks(x, methods, fontsize=7, rotation=30)
        ax.set_title(PAIRED_LABEL[k], fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.spines[["top", "right"]].set_visible(False)
    n = atlas["paired"][methods[0]]["images"]
    fig.suptitle(f"Against AR's image under the same keyed noise · {n} images per method · ±1 standard error",
                 fontsize=9)
    return fig


def export(result: dict, stem: Path) -> tuple[list[Path], dict]:
    """Write stem.json (the atlas), stem.png / .pdf (binned small multiples), stem_maps.png / .pdf (mean maps) and,
    under keyed noise, stem_paired.png / .pdf (the paired measures). Returns (paths, {kind: Figure})."""
    stem = Path(stem)
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1))
    paths = [stem.with_suffix(".json")]
    figs = {"binned": binned_figure(result), "maps": maps_figure(result)}
    if "paired" in result:
        figs["paired"] = paired_figure(result)
    for kind, fig in figs.items():
        name = stem.name if kind == "binned" else f"{stem.name}_{kind}"
        paths += [figures.save(fig, stem.with_name(name + ext)) for ext in (".png", ".pdf")]
    return paths, figs
