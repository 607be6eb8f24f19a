"""Downloads for a finished comparison: one zip with everything, then each method's image (PNG), its trace (JSON),
the heatmap composites, a 16:9 slide figure (PNG and PDF) and the race as a video (GIF and MP4), written into a fresh,
uniquely named folder under the app's temp dir. File names carry the prompt, the seed, the noise when it is keyed
(`_keyed`), the method and the values of the knobs its rule reads (shared files: the sliders, `cards.sliders`)."""
from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path

from specviz.analysis import views
from specviz.core import owned
from specviz.core.cards import Cards
from specviz.core.paths import slug
from specviz.render import draw, figures, panels, video


def export_dir(root: str | Path | None = None) -> Path:
    """A fresh folder for one export. Without `root`: under this process's own root folder (core/owned.py), recorded,
    and pruned with the process's other recorded folders once older than the cache age (3600 s, SPECVIZ_CACHE_AGE_S);
    nothing else in the temp dir is looked at. With `root` (a folder the caller chose): a new specviz-<random> folder
    there, left to the caller — never pruned, and nothing else in `root` is touched."""
    if root is None:
        return owned.new_folder()
    base = Path(root)
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="specviz-", dir=base))


def knob_tag(config: dict, names) -> str:
    """'lam0.5_delta0.5': the named knobs' values as run (names without a value in the config are left out)."""
    def value(v):
        return f"{v:g}" if isinstance(v, int | float) else f"-{slug(str(v), 16)}"
    return "_".join(f"{n.replace('_', '')}{value(config[n])}" for n in names if n in config)


def noise_tag(config: dict) -> str:
    """'_keyed' for a run under keyed noise, '' in the papers' mode (the default, as in the trace's config)."""
    return f"_{config['noise']}" if config.get("noise", "papers") != "papers" else ""


def export_run(traces: dict, images: dict, prompt: str, root: str | Path | None = None,
               videos: bool = True, *, cards: Cards) -> list[Path]:
    """Write every artefact of one run; returns the paths (the zip of all of them first, then the slide figure,
    images, traces, maps and videos; `cards`: the methods' cards, analysis.cards.cards())."""
    out = export_dir(root)
    config = next(iter(traces.values())).config
    stem = f"{slug(prompt)}_seed{config.get('seed', 0)}{noise_tag(config)}"
    shared = f"{stem}_{knob_tag(config, [k.name for k in cards.sliders])}"       # every shared name: the sliders
    paths = figures.in_one_thread(_slide, traces, images, prompt, out / f"{shared}_figure", cards.sliders)
    for m, t in traces.items():
        p = out / _name(stem, m, t.config, ".png", cards)
        draw.upscale(images[m], t.grid, 480).save(p)
        paths.append(p)
    for m, t in traces.items():
        p = out / _name(stem, m, t.config, "_trace.json", cards)
        t.save(p)
        paths.append(p)
    for kind in panels.exported_kinds(traces, cards):               # no groups map when no method forms groups
        p = out / f"{shared}_{views.MAPS[kind].output}.png"
        panels.heatmap(kind, traces, images, cards=cards).save(p)
        paths.append(p)
    if videos:
        paths += video.write_videos(traces, images, out / f"{shared}_race", video.lane_labels(traces, cards))
    bundle = out / f"{shared}_all.zip"
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as z:
        for p in paths:
            z.write(p, p.name)
    return [bundle] + paths


def _slide(traces: dict, images: dict, prompt: str, stem: Path, sliders: tuple) -> list[Path]:
    fig = figures.slide_figure(traces, images, prompt, video.settings_line(traces, sliders))
    return [figures.save(fig, stem.with_name(stem.name + ext)) for ext in (".pdf", ".png")]


def _name(stem: str, method: str, config: dict, suffix: str, cards: Cards) -> str:
    tag = knob_tag(config, cards.of(method).knob_names)
    return f"{stem}_{method}{'_' + tag if tag else ''}{suffix}"
