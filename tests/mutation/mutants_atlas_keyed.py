"""Wrong variants of the atlas's paired measures against AR under keyed noise (analysis/paired_run.py,
analysis/atlas_paired.py; protocol: tests/support/mutants.py)."""
from __future__ import annotations

import statistics

import numpy as np

from specviz.analysis import atlas_paired, paired, paired_run
from specviz.render import atlas_fig
from tests.analysis import test_atlas_keyed as t
from tests.support.mutants import Mutant

rows_from_traces = t.test_keyed_rows_are_the_paired_measures_of_their_two_traces
summary_from_rows = t.test_keyed_summary_and_map_from_the_rows
figure_draws = t.test_paired_figure_and_map_draw_the_atlas_numbers
_FIGURE = atlas_fig.paired_figure

_IMAGE = paired_run.reference_image
_BY_PROMPT: dict = {}


def _own_image(model, cfg, trace, run_image=None):
    """Wrong: AR's tokens, but the pixel measures taken against the run's own image."""
    if cfg.noise != "keyed":
        return None
    return paired.compare(trace, paired_run.reference(model, cfg, trace), run_image, run_image)


def _itself(model, cfg, trace, run_image=None):
    """Wrong: the run compared with itself instead of AR's run (tokens and pixels)."""
    if cfg.noise != "keyed":
        return None
    psnr, mad = paired.pixel_diff(run_image, run_image) if run_image is not None else (None, None)
    changed = paired.changed_positions(trace.tokens, trace.tokens)
    return paired.Paired(trace.method, changed, changed[0] if changed else None, changed[1:], psnr, mad)


def _image_per_prompt(model, cfg):
    """Wrong: AR's image remembered per prompt, so another seed's image of that prompt is compared."""
    key = (id(model), cfg.prompt)
    if key not in _BY_PROMPT:
        _BY_PROMPT[key] = _IMAGE(model, cfg)
    return _BY_PROMPT[key]


def _install_per_prompt(mp):
    _BY_PROMPT.clear()
    mp.setattr(paired_run, "reference_image", _image_per_prompt)


def _stdev(values):
    """Wrong: the spread of the per-image values reported as the mean's standard error (no 1/√n)."""
    v = list(values)
    return statistics.stdev(v) if len(v) > 1 else 0.0


def _first_only(rows):
    """Wrong: the changed map counts only each image's first departure."""
    h, w = rows[0]["grid"]
    hits = np.zeros(h * w)
    for r in rows:
        if r["changed_positions"]:
            hits[r["changed_positions"][0]] += 1
    return (hits / len(rows)).reshape(h, w).tolist()


def _changed_everywhere(atlas, dpi=110):
    """Wrong: every panel draws the changed-token means (a copied key), under its own title."""
    wrong = {**atlas, "paired": {m: {**s, **{k: s["changed"] for k in atlas_paired.WITH_SE},
                                     **{k + "_se": s["changed_se"] for k in atlas_paired.WITH_SE}}
                                 for m, s in atlas["paired"].items()}}
    return _FIGURE(wrong, dpi)


VARIANTS = [
    Mutant("atlas keyed: pixels against the run's own image",
           lambda mp: mp.setattr(paired_run, "against_ar", _own_image), (rows_from_traces,)),
    Mutant("atlas keyed: the run compared with itself", lambda mp: mp.setattr(paired_run, "against_ar", _itself),
           (rows_from_traces, summary_from_rows)),
    Mutant("atlas keyed: AR's image of another seed (remembered per prompt)", _install_per_prompt,
           (rows_from_traces,)),
    Mutant("atlas keyed: standard error without 1/sqrt(n)",
           lambda mp: mp.setattr(atlas_paired, "standard_error", _stdev), (summary_from_rows,)),
    Mutant("atlas keyed: changed map of first departures only",
           lambda mp: mp.setattr(atlas_paired, "changed_map", _first_only), (summary_from_rows,)),
    Mutant("atlas keyed: every paired panel draws the changed tokens",
           lambda mp: mp.setattr(atlas_fig, "paired_figure", _changed_everywhere), (figure_draws,)),
]
