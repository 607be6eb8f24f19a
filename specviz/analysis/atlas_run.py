"""The atlas runs (`python -m specviz atlas`): every (method, prompt, seed), one compact row per run appended to a JSONL
file (a restart skips the rows already there), locally or as Ray tasks, one task per image (prompt, seed) with all
its method specs, AR's first: under keyed noise AR is decoded once per image and model, in the process that pairs
the image's other runs with it (analysis/paired_run.py). Aggregation: atlas.py; figures and the atlas JSON:
render.atlas_fig.export."""
from __future__ import annotations

import functools
import hashlib
import json
import time
from pathlib import Path

from specviz.analysis import atlas, bench, paired_run
from specviz.analysis.fanout import ray_map
from specviz.core.paths import slug
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from specviz.engine.drafters import drafter_factory
from specviz.models import is_embedded, load_model
from specviz.scenes import regions as regions_mod


def jobs(specs: list[str], prompts: int, seeds: int, noise: str = "papers") -> list[dict]:
    """(spec, prompt, seed) for every method spec, fixed captions (bench.prompt_set), interleaved by image; with
    noise "keyed" every job says so (its row then carries the paired measures against AR)."""
    mode = {"noise": "keyed"} if noise == "keyed" else {}
    return [{"spec": m, "prompt": cap, "seed": s} | mode for cap, _ in bench.prompt_set(prompts)
            for s in range(seeds) for m in specs]


def by_image(todo: list[dict]) -> list[list[dict]]:
    """The jobs grouped by image (prompt, seed) in order of first appearance, AR's job first within an image (the
    others keep their order): the run every keyed run of that image is paired with is then already remembered."""
    groups: dict = {}
    for j in todo:
        groups.setdefault((j["prompt"], j["seed"]), []).append(j)
    return [sorted(g, key=lambda j: bench.parse_spec(j["spec"])[0] != "ar") for g in groups.values()]


def region_head_for(model):
    """The region head when `model` is the shipped scenes model (48x48 images from a VQ), else None."""
    if not is_embedded(getattr(model, "name", "")) or getattr(model, "vq", None) is None:
        return None
    return regions_mod.load_head() if regions_mod.HEAD_PATH.exists() else None


def run_job(model, factory, head, job: dict, model_name: str = "scenes", trace_dir: Path | None = None) -> dict:
    """Decode one job; its atlas row (and its trace as JSON under trace_dir, when given)."""
    name, over = bench.parse_spec(job["spec"])
    mode = {"noise": job["noise"]} if "noise" in job else {}
    cfg = RunConfig(**({"model": model_name} | mode | over | {"method": name, "prompt": job["prompt"],
                                                               "seed": job["seed"]}))
    t0 = time.perf_counter()
    trace = drain(decode(model, cfg, factory)).trace
    seconds = time.perf_counter() - t0
    image = paired_run.image(model, trace.tokens)
    regions = None
    if head is not None:
        regions = regions_mod.predict(head, image[None])[0]
    vs_ar = paired_run.against_ar(model, cfg, trace, image)            # None in the papers' mode
    row = atlas.record(trace, image, regions, vs_ar, **job, seconds=seconds)
    if trace_dir is not None:
        trace.save(Path(trace_dir) / f"{trace_name(row)}.json")
    return row


def trace_name(row: dict) -> str:
    """A file name for a row's trace: the method spec's and prompt's slugs, a short hash of the key, the seed."""
    digest = hashlib.sha1(atlas.key(row).encode()).hexdigest()[:8]
    return f"{slug(row['spec'], 24)}_{slug(row['prompt'], 24)}_{digest}_s{row['seed']}"


def read_rows(path: Path) -> list[dict]:
    path = Path(path)
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def collect(todo: list[dict], out: Path, load, ray: str | None = None, model_name: str = "scenes",
            progress=None, trace_dir: Path | None = None) -> tuple[list[dict], int]:
    """Run the jobs not yet in `out` (JSONL, one row appended per finished run). `load()` -> (model, factory) for
    local runs; with `ray` ('auto' or an address) each image's jobs are one Ray task loading `model_name` itself.
    progress(done, total) is called after each run. Returns (the rows of `todo` from out, new runs)."""
    out = Path(out)
    for j in todo:                                            # validate every spec before any work
        name, over = bench.parse_spec(j["spec"])
        RunConfig(**({"noise": j["noise"]} if "noise" in j else {}) | over | {"method": name})
    done = {atlas.key(r) for r in read_rows(out)}
    left = [j for j in todo if atlas.key(j) not in done]
    out.parent.mkdir(parents=True, exist_ok=True)                # --out in a folder that does not exist yet
    rows = _flat(ray_map(ray, functools.partial(_ray_image, model_name), by_image(left))) if ray else \
        _local_rows(load, left, model_name, trace_dir)
    n = 0
    for row in rows:
        with out.open("a") as f:
            f.write(json.dumps(row) + "\n")
        n += 1
        if progress is not None:
            progress(len(todo) - len(left) + n, len(todo))
    want = {atlas.key(j) for j in todo}
    return [r for r in read_rows(out) if atlas.key(r) in want], n


def _local_rows(load, left, model_name, trace_dir):
    if not left:
        return
    model, factory = load()
    head = region_head_for(model)
    for group in by_image(left):
        for j in group:
            yield run_job(model, factory, head, j, model_name, trace_dir)


def _flat(groups):
    for rows in groups:
        yield from rows


@functools.lru_cache(maxsize=2)
def _worker_model(model_name: str):
    model = load_model(model_name)
    return model, drafter_factory(model), region_head_for(model)


def _ray_image(model_name: str, group: list[dict]) -> list[dict]:
    """One Ray task: the rows of one image's jobs (by_image), on the worker process's model (loaded once)."""
    return [run_job(*_worker_model(model_name), j, model_name) for j in group]
