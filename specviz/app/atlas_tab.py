"""The app's Atlas tab: a small acceleration atlas on the embedded model (default 6 captions x 1 seed) -> small
multiples, mean maps, the headline table, the claims and downloads (JSONL rows, atlas JSON, PNG and PDF figures);
with keyed noise also each method against AR's image (changed tokens, first change, PSNR, mean |pixel difference|).

Same engine and files as `python -m specviz atlas`; each build writes into a fresh folder under the app's temp dir
(old ones are pruned with the export folders). app.py calls `layout` inside its tab block and `wire` once."""
from __future__ import annotations

import gradio as gr

from specviz.analysis import atlas, atlas_paired, atlas_run, bench
from specviz.app import widgets as w
from specviz.app.errors import friendly
from specviz.engine.registry import METHODS
from specviz.render import atlas_fig
from specviz.render.exports import export_dir

DEFAULT_METHODS = ["ar", "sjd", "csd", "cascade"]
DEFAULT_PROMPTS, MAX_PROMPTS, MAX_SEEDS = 6, 12, 2
MODEL = "scenes"
INTRO = ("Where acceleration concentrates, over many images of the embedded model (the same captions and seeds for "
         "every method): accepted / relaxed shares and TV cost by the target's entropy (pooled deciles), by patch "
         "detail and by region (sky / ground / object, from the region head), and each method's mean maps. "
         "`python -m specviz atlas` builds larger ones (docs/atlas.md).")


# the paired table: Gradio's Markdown breaks words anywhere ("ca|sc|ad|e" in a narrow column): words whole,
# cells on one line (app.py adds it to the page's CSS)
CSS = ("#at_paired span, #at_paired th, #at_paired td {overflow-wrap: normal !important;"
       " word-break: normal !important;} #at_paired td {white-space: nowrap;}")
NOISE = bench.knob("noise")                     # the race's own noise knob: same choices and words


def run_atlas(load, methods, prompts, seeds, root: str | None = None, progress=None, noise: str = "papers"):
    """Build an atlas with `load()` -> (model, drafter factory). Returns (binned Figure, maps Figure, headline rows,
    claims Markdown, download paths, the paired Markdown against AR: '' in the papers' noise)."""
    methods = [m for m in (methods or []) if m in METHODS]
    if not methods:
        raise ValueError(f"pick at least one method ({', '.join(METHODS)})")
    prompts = int(max(2, min(MAX_PROMPTS, prompts)))
    seeds = int(max(1, min(MAX_SEEDS, seeds)))
    out = export_dir(root) / "atlas.jsonl"
    todo = atlas_run.jobs(methods, prompts, seeds, noise)

    def tick(done: int, total: int) -> None:
        if progress is not None:
            progress((done, total), desc=f"atlas: {done} of {total} runs")
    tick(0, len(todo))
    rows, _ = atlas_run.collect(todo, out, load, progress=tick)
    result = atlas.aggregate(rows)
    paths, figs = atlas_fig.export(result, out.with_suffix(""))
    return (figs["binned"], figs["maps"], atlas.headline_rows(result), atlas.claims_markdown(result),
            [str(out)] + [str(p) for p in paths], atlas_paired.markdown(result))


def layout(c: dict) -> None:
    """The tab's controls and outputs (call inside a gr.Tab block); components go into `c` as at_*."""
    gr.Markdown(INTRO)
    with gr.Row():
        c["at_methods"] = w.CheckboxGroup(list(METHODS), value=DEFAULT_METHODS, label="Methods",
                                          elem_id="at_methods")
        c["at_prompts"] = w.Slider(2, MAX_PROMPTS, DEFAULT_PROMPTS, step=1, label="Captions", elem_id="at_prompts")
        c["at_seeds"] = w.Slider(1, MAX_SEEDS, 1, step=1, label="Seeds", elem_id="at_seeds")
        c["at_noise"] = w.Radio(list(NOISE.choices), value=NOISE.default, label=NOISE.label, elem_id="at_noise")
    c["at_go"] = gr.Button("Build atlas", elem_id="at_go")
    c["at_claims"] = gr.Markdown(elem_id="at_claims")
    c["at_table"] = gr.Dataframe(headers=["method"] + [t for _, t in atlas.HEADLINE], interactive=False,
                                 elem_id="at_table")
    c["at_paired"] = gr.Markdown(elem_id="at_paired")
    c["at_plot"] = gr.Plot(show_label=False, elem_id="at_plot")
    c["at_maps"] = gr.Plot(show_label=False, elem_id="at_maps")
    c["at_files"] = gr.File(label="Downloads: rows (JSONL), atlas (JSON), figures (PNG, PDF)",
                            file_count="multiple", interactive=False, elem_id="at_files")


def wire(h, c: dict) -> None:
    """Wire the tab to the app's handlers `h` (its catalogue loads the model; files go under its export root)."""

    @friendly
    def build(methods, prompts, seeds, noise=NOISE.default, progress=gr.Progress()):  # noqa: B008 (Gradio API)
        if MODEL not in h.catalogue.models:
            raise ValueError(f"the atlas runs on the embedded model, which this app does not offer ({MODEL})")
        return run_atlas(lambda: h.catalogue.load(MODEL), methods, prompts or DEFAULT_PROMPTS, seeds or 1,
                         h.export_root, progress, noise or NOISE.default)

    c["at_go"].click(build, [c["at_methods"], c["at_prompts"], c["at_seeds"], c["at_noise"]],
                     [c["at_plot"], c["at_maps"], c["at_table"], c["at_claims"], c["at_files"], c["at_paired"]],
                     concurrency_id="model", concurrency_limit=1, api_visibility="private")
