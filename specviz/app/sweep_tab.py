"""The app's Sweep tab: a small grid over one rule parameter on the embedded model, with AR and classic lossless SJD
as reference points -> the trade-off plot (specviz/analysis/front.py, drawn by specviz/render/pareto.py) + table.
Clicking a row opens that point in the race:
its method joins the selected ones, its knob values go to the sliders, and the race runs with the page's prompt and
seed (a History row with source "sweep").

The sweep runs with the page's noise (the tab's Noise control mirrors the race's): under keyed noise every point is
paired with AR's image of the same caption and seed, so "tokens changed vs AR" and "PSNR vs AR" can be plotted with
their standard errors; in the papers' mode those two measures are refused before any work.

Same engine and files as `python -m specviz sweep`; each run writes a fresh JSONL under the app's temp dir
(old ones are pruned with the export folders).
"""
from __future__ import annotations

import gradio as gr

from specviz.analysis import bench, front, sweep
from specviz.app.errors import friendly
from specviz.engine.registry import METHODS, REGISTRY, Recomputed, knob, ui_knobs
from specviz.render import pareto
from specviz.render.exports import export_dir

MAX_POINTS, MAX_PROMPTS = 6, 6
REFERENCES = (("ar", {}), ("sjd", {}))          # the baseline and the classic lossless method, run with every sweep
COLUMNS = ["point", "step compression", "implausible / image", "NLL nats/token", "Σ per-token TV cost", "fidelity",
           "s / image", "changed vs AR / image", "PSNR vs AR dB"]
NOISE = bench.knob("noise")                     # the race's own noise knob: same choices
NOISE_LABEL = "Noise (the race's: changing it here changes it there)"
NOISE_INFO = ("keyed: every point shares AR's draws for each caption and seed, so tokens changed vs AR and PSNR vs "
              "AR are measured with their standard errors; papers: each method draws its own")


def params() -> dict:
    """method -> the numeric knobs its rule reads (from the registry), for every method that has any."""
    out = {}
    for m in REGISTRY.values():
        nums = tuple(k for k in m.rule_knobs if knob(k).kind in (int, float))
        if nums:
            out[m.name] = nums
    return out


def param_choices(method: str):
    """The parameter dropdown for a newly picked method (an unknown one falls back to the first sweepable)."""
    table = params()
    ps = table.get(method) or next(iter(table.values()))
    return gr.Dropdown(choices=list(ps), value=ps[0])


def run_sweep(method: str, param: str, values: str, prompts: int, root: str | None = None, progress=None,
              measure: str = "implausible", noise: str = "papers"):
    """Measure each value of `param` for `method` on `prompts` fixed captions (1 seed) plus the references, all under
    `noise`. Returns (matplotlib Figure, table rows, [(method, point)] in the table's order)."""
    table = params()
    if method not in table or param not in table[method]:
        raise ValueError(f"choose a parameter of {method}: {', '.join(table.get(method, ()))}")
    if noise not in NOISE.choices:
        raise ValueError(f"noise must be one of {', '.join(NOISE.choices)}, got {noise!r}")
    if measure in front.PAIRED and noise != "keyed":
        raise ValueError(f"'{front.MEASURES[measure].split(' (')[0]}' compares each image with AR's under the same "
                         "keyed noise: set Noise to keyed (here or in the controls), or pick another quality cost")
    points = sweep.sweep_points([param], [values.replace(" ", "")])
    if not 1 <= len(points) <= MAX_POINTS:
        raise ValueError(f"give 1 to {MAX_POINTS} comma-separated values, e.g. 0.5,1,2,4")
    prompts = int(max(2, min(MAX_PROMPTS, prompts)))
    out = export_dir(root) / "sweep.jsonl"                      # a fresh folder under the app's temp dir
    caps = bench.prompt_set(prompts)
    steps = list(REFERENCES) + [(method, p) for p in points]
    for i, (m, p) in enumerate(steps):
        if progress is not None:
            progress((i, len(steps)), desc=f"{m} " + ", ".join(f"{k}={v}" for k, v in p.items()))
        sweep.sweep(m, [p], caps, 1, out, base={"noise": "keyed"} if noise == "keyed" else None)
    rows = sweep.read_rows(out)
    table = [[f"{r['method']} {', '.join(f'{k}={_fmt(v)}' for k, v in r['point'].items())}".strip(),
              r["result"]["step_compression"], r["result"]["implausible"], r["result"]["nll"], r["result"]["tv_cost"],
              r["result"].get("fidelity"), r["result"]["seconds"], *paired_cells(r["result"])] for r in rows]
    return pareto.figure(front.plot(rows, measure)), table, [(r["method"], r["point"]) for r in rows]


def paired_cells(result: dict) -> list:
    """The two keyed columns: 'mean ± SE' of the changed tokens and of the PSNR over the images that differ
    ('identical' when none does); None in the papers' mode."""
    if "changed" not in result:
        return [None, None]
    psnr = (f"{result['psnr']:.2f} ± {result['psnr_se']:.2f} ({result['psnr_images']} differ)" if "psnr" in result
            else "identical")
    return [f"{result['changed']:.2f} ± {result['changed_se']:.2f}", psnr]


def handler(export_root: str | None):
    """The Run button's function: (method, param, values, prompts, measure, noise) -> (figure, table, points)."""
    @friendly
    def run(method, param, values, prompts, measure="implausible", noise=NOISE.default,
            progress=gr.Progress()):  # noqa: B008 (Gradio API)
        return run_sweep(method, param, str(values), int(prompts or 2), export_root, progress,
                         measure or "implausible", noise or NOISE.default)
    return run


def _opened() -> tuple:
    """The knobs a point can set: the sliders beside the methods (ui_knobs("main")), then every other sweepable knob
    that is one of the race's controls, each once, from the registry."""
    out = [k.name for k in ui_knobs("main")]
    for ps in params().values():
        out += [k for k in ps if k not in out and knob(k).ui]
    return tuple(out)


OPENED = Recomputed(_opened)          # knobs a point can set (recomputed on each use: a method registered later joins)


def open_point(points: list, row: int, knobs: dict, methods: list) -> dict:
    """The table's row `row` opened in the race: `knobs` (the OPENED controls' current values) with the point's
    values, and `methods` with the point's method added (METHODS order). A point whose knob is not a control of the
    race cannot be opened (ValueError, saying how to run it instead)."""
    if not 0 <= row < len(points):
        raise ValueError("run a sweep first, then click one of its rows")
    method, point = points[row]
    missing = [k for k in point if k not in OPENED]
    if missing:
        flags = " ".join(f"--{k.replace('_', '-')} {point[k]:g}" for k in missing)
        raise ValueError(f"{', '.join(missing)} is not one of the race's controls; run this point with "
                         f"`python -m specviz generate --method {method} {flags}`")
    return {**knobs, **point, "methods": [m for m in METHODS if m in {*methods, method}]}


@friendly
def picked(inputs: dict) -> dict:
    """A click on the sweep table: {points, methods, OPENED..., select} -> the controls set to that point."""
    knobs = {k: inputs[k] for k in OPENED}
    return open_point(inputs["points"] or [], int(inputs["select"].index[0]), knobs, inputs["methods"] or [])


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def wire(h, c: dict) -> None:
    """The tab's events: the method picks its parameters; Run sweeps through `h.sweep` (a GPU lease where there is
    one) under the tab's noise, which mirrors the race's Noise both ways."""
    private = dict(queue=False, api_visibility="private")
    c["sw_method"].change(param_choices, [c["sw_method"]], [c["sw_param"]], **private)
    ins = [c[n] for n in ("sw_method", "sw_param", "sw_values", "sw_prompts", "sw_measure", "sw_noise")]
    c["sw_go"].click(h.sweep, ins, [c["sw_plot"], c["sw_table"], c["sw_points"]], concurrency_id="model",
                     concurrency_limit=1, api_visibility="private")
    c["noise"].change(lambda v: v, [c["noise"]], [c["sw_noise"]], **private)
    c["sw_noise"].input(lambda v: v, [c["sw_noise"]], [c["noise"]], **private)
