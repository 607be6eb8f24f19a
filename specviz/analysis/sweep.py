"""`python -m specviz sweep`: a grid over rule parameters, each point measured as the bench does (locally, or as Ray
tasks), appended to a JSONL file so a restart skips finished points. The trade-off plot: render.pareto.figure."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

from tqdm import tqdm

from specviz.analysis.bench import cast_knob, measure
from specviz.analysis.fanout import ray_map
from specviz.engine.config import RunConfig
from specviz.models import load_model


def sweep_points(params: list[str], values: list[str]) -> list[dict]:
    grids = [[cast_knob(p, v) for v in vals.split(",")] for p, vals in zip(params, values)]
    return [dict(zip(params, combo)) for combo in itertools.product(*grids)]


def sweep(method: str, points: list[dict], prompts, seeds: int, out: Path, ray: str | None = None,
          model_name: str = "scenes") -> tuple[list[dict], int]:
    """Measure every grid point not yet in `out` (JSONL, appended as each point finishes, so a restart skips
    finished points). Locally by default; with `ray` ('auto' = connect to or start a local Ray; or an address)
    each point is a Ray task. Returns (all rows of out, number of new points)."""
    for p in points:
        RunConfig(method=method, **p)                         # validate the whole grid before any work
    key = lambda m, p: json.dumps([m, p], sort_keys=True)                # one file may hold several methods
    done = {key(r.get("method", method), r["point"]) for r in read_rows(out)} if out.exists() else set()
    todo = [p for p in points if key(method, p) not in done]
    results = ray_map(ray, lambda p: _point(method, p, prompts, seeds, model_name), todo) if ray else \
        _local_points(method, todo, prompts, seeds, model_name)
    n = 0
    for p, agg in results:
        with out.open("a") as f:
            f.write(json.dumps({"method": method, "point": p, "result": agg}) + "\n")
        n += 1
    return read_rows(out), n


def read_rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in Path(out).read_text().splitlines()]


def _point(method, p, prompts, seeds, model_name):
    res = measure(load_model(model_name), [method], prompts, seeds, {**p, "model": model_name}, progress=False)
    return p, res["methods"][method]


def _local_points(method, todo, prompts, seeds, model_name):
    for p in tqdm(todo, desc="sweep"):
        yield _point(method, p, prompts, seeds, model_name)
