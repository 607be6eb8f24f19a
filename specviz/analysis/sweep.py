"""`python -m specviz sweep`: a grid over rule parameters, each point measured as the bench does (locally, or as Ray
tasks), appended to a JSONL file so a restart skips finished points. The trade-off plot:
analysis.front.plot, drawn by render.pareto.figure."""
from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

from tqdm import tqdm

from specviz.analysis import paired_run
from specviz.analysis.bench import cast_knob, measure
from specviz.analysis.fanout import ray_map
from specviz.core.numbers import standard_error
from specviz.engine.config import RunConfig
from specviz.models import load_model


def sweep_points(params: list[str], values: list[str]) -> list[dict]:
    grids = [[cast_knob(p, v) for v in vals.split(",")] for p, vals in zip(params, values)]
    return [dict(zip(params, combo)) for combo in itertools.product(*grids)]


def sweep(method: str, points: list[dict], prompts, seeds: int, out: Path, ray: str | None = None,
          model_name: str = "scenes", base: dict | None = None) -> tuple[list[dict], int]:
    """Measure every grid point not yet in `out` (JSONL, appended as each point finishes, so a restart skips
    finished points). Locally by default; with `ray` ('auto' = connect to or start a local Ray; or an address)
    each point is a Ray task. `base`: knobs every point shares (e.g. {"noise": "keyed"}: the rows then carry the
    changed-token count against AR, analysis/paired_run.py). Returns (all rows of out, number of new points)."""
    base = base or {}
    for p in points:
        RunConfig(method=method, **base, **p)                 # validate the whole grid before any work
    key = lambda m, p, b: json.dumps([m, p, b], sort_keys=True)          # one file may hold several methods
    done = {key(r.get("method", method), r["point"], r.get("base", {})) for r in read_rows(out)} \
        if out.exists() else set()
    todo = [p for p in points if key(method, p, base) not in done]
    results = ray_map(ray, lambda p: _point(method, {**base, **p}, prompts, seeds, model_name), todo) if ray else \
        _local_points(method, [{**base, **p} for p in todo], prompts, seeds, model_name)
    n = 0
    for p, agg in results:
        row = {"method": method, "point": {k: v for k, v in p.items() if k not in base}, "result": agg}
        with out.open("a") as f:
            f.write(json.dumps(row | ({"base": base} if base else {})) + "\n")
        n += 1
    return read_rows(out), n


def read_rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in Path(out).read_text().splitlines()]


def _point(method, p, prompts, seeds, model_name):
    model = load_model(model_name)
    res = measure(model, [method], prompts, seeds, {**p, "model": model_name}, progress=False)
    agg = res["methods"][method]
    if p.get("noise") == "keyed":                 # paired with AR's image: the pixel measure beside the token count
        agg = agg | pixel_measures(model, method, {**p, "model": model_name}, res["runs"][method])
    return p, agg


def pixel_measures(model, method: str, base: dict, rows: list[dict]) -> dict:
    """Under keyed noise, over the bench rows of one point: PSNR against AR's image of the same caption and seed,
    mean and standard error over the images whose pixels differ from AR's (an identical image's PSNR is infinite),
    and how many differ ("psnr_images"; no "psnr" when none does)."""
    dbs = []
    for r in rows:
        cfg = RunConfig(**(base | {"method": method, "prompt": r["caption"], "seed": r["seed"]}))
        db, _ = paired_run.pixels(model, cfg, r["codes"])
        if math.isfinite(db):
            dbs.append(db)
    out = {"psnr_images": len(dbs)}
    if dbs:
        out |= {"psnr": round(sum(dbs) / len(dbs), 4), "psnr_se": round(standard_error(dbs), 4)}
    return out


def _local_points(method, todo, prompts, seeds, model_name):
    for p in tqdm(todo, desc="sweep"):
        yield _point(method, p, prompts, seeds, model_name)
