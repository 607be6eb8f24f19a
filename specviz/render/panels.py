"""Trace views -> finished pictures for the app: race frames, heatmap composites (one map per method, shared
colour scale, legend), the live-preview map and the replay frame. Glue between views.py (what) and draw.py
(how); no model, no Gradio."""
from __future__ import annotations

import numpy as np
from PIL import Image

from specviz.analysis import paired, views
from specviz.core.cards import Cards
from specviz.core.records import DECISIONS
from specviz.core.trace import Trace
from specviz.render import draw, focus

GROUP_PX = 480                  # the groups map's panels: member counts need cells of ~30 px
REPLAY_PX = 360


def race_frame(decoded: Image.Image, decided: np.ndarray, grid, px: int = draw.PANEL,
               mark: int | None = None) -> Image.Image:
    """A partial image: decoded codes upscaled crisp, undecided cells hatched (`mark`: the inspected cell, ringed)."""
    im = draw.hatch(draw.upscale(decoded, grid, px), ~decided)
    return im if mark is None else focus.outline(im, mark, grid)


def base_image(image: np.ndarray | None, grid, px: int = draw.PANEL) -> Image.Image | None:
    return None if image is None else draw.upscale(image, grid, px)


def heatmap(kind: str, traces: dict, images: dict, opacity: float = 1.0, mark: int | None = None,
            only: str | None = None, *, cards: Cards) -> Image.Image:
    """One composite per map kind over all methods of a run (shared colour scale, legend on the right); `mark`: the
    inspected position, ringed in every panel; `only`: draw one method's panel (map_layout says which), at the
    run's shared scale and legend; `cards`: the methods' cards (which of them form groups)."""
    if not traces:
        return draw.message("Generate to see the maps")
    panels, side = _DRAWINGS[views.MAPS[kind].drawing](kind, traces, cards)     # the record says how it is drawn
    keep, px = map_layout(kind, traces, only, cards=cards)
    out = []
    for (method, im) in (p for p in panels if p[0] in keep):
        grid = traces[method].grid
        im = draw.blend(im, base_image(images.get(method), grid, px), opacity)
        if mark is not None and side is not None:           # side None: the groups map's note, no grid to ring
            im = focus.outline(im, mark, grid)
        out.append((_title(traces[method]), im))
    return draw.composite(out, side, px)


def heatmaps(traces: dict, images: dict, opacity: float = 1.0, mark: int | None = None,
             only: str | None = None, *, cards: Cards) -> dict:
    """Every map kind's composite, by kind (views.MAPS order)."""
    return {k: heatmap(k, traces, images, opacity, mark, only, cards=cards) for k in views.MAPS}


def map_layout(kind: str, traces: dict, only: str | None = None, *, cards: Cards) -> tuple[list, int]:
    """Which methods a map kind's composite shows, in panel order, and its panel size (clicks are located with it).
    `only`: one panel — that method's where the map has one (the groups map: group formers; "changed vs AR": the
    methods compared with AR), else the map's first."""
    drawing = views.MAPS[kind].drawing                              # the record says which panels it has
    if drawing == "groups":
        formers = [m for m in traces if cards.of(m).forms_groups]
        shown, px = (formers or list(traces)[:1]), GROUP_PX
    elif drawing == "changed":
        shown, px = _changed_layout(traces)[0], draw.PANEL
    else:
        shown, px = list(traces), draw.PANEL
    if only is not None:
        shown = [only] if only in shown else shown[:1]
    return shown, px


def _title(trace: Trace) -> str:
    s = trace.summary
    if not s:
        return trace.method
    return f"{trace.method} · {s['target_forwards']} fwd · {s['step_compression']:.2f}×"


def _numeric_panels(kind: str, traces: dict):
    spec = views.MAPS[kind]
    arrays = {m: spec.compute(t, traces) for m, t in traces.items()}
    lo, hi = views.shared_range(list(arrays.values()), spec)
    panels = [(m, draw.upscale(draw.colorize(a, spec.cmap, lo, hi), traces[m].grid)) for m, a in arrays.items()]
    bar = draw.colorbar(spec.cmap, lo, hi, spec.label + " (grey: none)")
    return panels, bar


def _decision_panels(traces: dict):
    colours = [draw.DECISION_RGB[d] for d in DECISIONS]
    panels = []
    for m, t in traces.items():
        idx, rejected = views.decision_map(t)
        im = draw.upscale(draw.categorical(idx, colours), t.grid)
        later = rejected & np.isfinite(idx) & (idx != DECISIONS.index("resampled"))   # resampled implies it
        panels.append((m, draw.mark_dots(im, np.flatnonzero(later), t.grid)))
    used = {DECISIONS[int(v)] for t in traces.values() for v in np.unique(views.decision_map(t)[0])
            if np.isfinite(v)}
    items = [(draw.DECISION_LABEL[d], draw.DECISION_RGB[d]) for d in DECISIONS if d in used]
    items.append(("accepted after a rejected draft", "dot"))
    return panels, draw.legend(items, "committing decision")


def _group_panels(traces: dict, cards: Cards):
    """Only the methods whose record forms groups get a panel (at double size, so member counts stay readable);
    the legend says what a group is and covers every colour drawn."""
    formers = [m for m in traces if cards.of(m).forms_groups]
    if not formers:
        names = ", ".join(traces)
        return [(next(iter(traces)), draw.message(f"none of {names} forms groups: add a group-forming method "
                                                    "(CASCADE)", GROUP_PX))], None
    panels = []
    for m in formers:
        t = traces[m]
        cells = views.group_cells(t)
        im = draw.upscale(draw.categorical(views.group_category(cells, t.grid), draw.GROUP_RGB), t.grid, GROUP_PX)
        panels.append((m, draw.draw_groups(im, cells, t.grid)))
    others = [m for m in traces if m not in formers]
    items = list(zip(draw.GROUP_LABEL, draw.GROUP_RGB, strict=False))
    items += [("no tree candidate judged here (AR step, bonus token)", draw.NAN_RGB),
              ("ring: accepted by relaxation", "ring"), ("digit: members in the group", (255, 255, 255)),
              ("bar: branches converge at the next cell", (255, 230, 200))]
    if others:
        items.append((f"no groups: {', '.join(others)}", (255, 255, 255)))
    return panels, draw.legend(items, "group = alternative draft tokens for this cell")


def _changed_layout(traces: dict) -> tuple[list, str]:
    """The methods the "changed vs AR" map shows (every one comparable with the run's keyed AR trace) and, when none
    is, why (then every method's panel is grey and the legend says why)."""
    ar = traces.get("ar")
    if ar is None:
        return list(traces), "no AR run: add AR (keyed noise) to see what each method changed"
    others = [m for m in traces if m != "ar"]
    shown = [m for m in others if paired.comparable(traces[m], ar) is None]
    if shown:
        return shown, ""
    return list(traces), (paired.comparable(traces[others[0]], ar) if others else
                          "add a second method to compare with AR")


def _changed_panels(traces: dict, kind: str = "changed"):
    """Each method's tokens against AR's under the same keyed noise: the first departure and what changed
    downstream of it (analysis/paired.py); grey panels and the reason when nothing is comparable."""
    shown, why = _changed_layout(traces)
    items = list(zip(draw.CHANGED_LABEL, draw.CHANGED_RGB, strict=True)) + [("not decided yet", draw.NAN_RGB)]
    if why:
        grey = {m: np.full(tuple(traces[m].grid), np.nan) for m in shown}
        panels = [(m, draw.upscale(draw.categorical(grey[m], draw.CHANGED_RGB), traces[m].grid)) for m in shown]
        return panels, draw.legend([(why, draw.NAN_RGB)], "not comparable with AR")
    compute = views.MAPS[kind].compute
    panels = [(m, draw.upscale(draw.categorical(compute(traces[m], traces), draw.CHANGED_RGB), traces[m].grid))
              for m in shown]
    return panels, draw.legend(items, "token vs AR's, same keyed noise")


# a map record's `drawing` -> (kind, traces, cards) -> (panels, side): its method panels and its legend or colour bar
_DRAWINGS = {"numeric": lambda kind, traces, cards: _numeric_panels(kind, traces),
             "decision": lambda kind, traces, cards: _decision_panels(traces),
             "groups": lambda kind, traces, cards: _group_panels(traces, cards),
             "changed": lambda kind, traces, cards: _changed_panels(traces, kind)}


def preview_map(previews: list, traces: dict, images: dict, opacity: float = 1.0) -> Image.Image:
    """Acceptance probability b' of each recorded draft under the new knobs (shared 0..1 scale)."""
    if not previews:
        return draw.message("Move a slider beside the methods to preview the recorded drafts")
    panels = []
    for pv in previews:
        t = traces[pv.method]
        im = draw.upscale(draw.colorize(pv.accept, "viridis", 0.0, 1.0), t.grid)
        im = draw.blend(im, base_image(images.get(pv.method), t.grid), opacity)
        changed = np.flatnonzero(np.abs(np.nan_to_num(pv.accept - pv.recorded)) > 0.01)
        title = f"{pv.method}  ·  est. {pv.expected_compression:.2f}×"
        panels.append((title, draw.mark_dots(im, changed, t.grid, frac=0.12)))
    return draw.composite(panels, draw.colorbar("viridis", 0, 1, "preview: acceptance prob. b' of the "
                                                                    "recorded drafts (grey: none judged; "
                                                                    "dot: b' differs from the run's b)"))


def replay_image(trace: Trace, image: np.ndarray | None, step: int, px: int = REPLAY_PX) -> tuple[Image.Image, str]:
    """The run as it stood after verification step `step`, with that step's drafts and decisions drawn on top."""
    v = views.step_view(trace, step)
    grid = trace.grid
    base = base_image(image, grid, px) or draw.upscale(np.full((*grid, 3), 200, np.uint8), grid, px)
    im = draw.draw_replay(draw.hatch(base, ~views.decided_mask(trace, v.step)), v.events, v.drafted, grid)
    title = f"{trace.method} · forward {v.step + 1}"                      # counted as the race lanes count
    return draw.composite([(title, im)], replay_legend(), px), views.step_caption(trace, v)


def replay_legend() -> Image.Image:
    items = [("drafted (outline)", (235, 235, 235))]
    items += [(draw.DECISION_LABEL[d], draw.DECISION_RGB[d]) for d in DECISIONS]
    items.append(("not committed yet", "hatch"))
    return draw.legend(items, "this step")


def exported_kinds(traces: dict, cards: Cards) -> tuple:
    """The map kinds an export writes: the groups map only when a method of the run forms groups (its card says
    so); otherwise that map is only a note, and the export leaves it out."""
    forms = any(cards.of(m).forms_groups for m in traces)
    return tuple(k for k, spec in views.MAPS.items() if forms or not spec.needs_groups)
