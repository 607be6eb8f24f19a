"""`python -m specviz atlas`: run every (method, prompt, seed), append one compact row per run to a JSONL file (a
restart skips the rows already there), locally or as Ray tasks, then aggregate (specviz.analysis.atlas) and export the
figures (PNG, PDF) and the atlas JSON."""
from __future__ import annotations

import functools
import json
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from specviz.analysis import atlas, bench
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain


def jobs(specs: list[str], prompts: int, seeds: int) -> list[dict]:
    """(spec, prompt, seed) for every method spec, fixed captions (bench.prompt_set), interleaved by image."""
    return [{"spec": m, "prompt": cap, "seed": s} for cap, _ in bench.prompt_set(prompts) for s in range(seeds)
            for m in specs]


def region_head_for(model):
    """The region head when `model` is the shipped scenes model (48x48 images from a VQ), else None."""
    if getattr(model, "name", "") != "scenes" or getattr(model, "vq", None) is None:
        return None
    from specviz.scenes import regions
    return regions.load_head() if regions.HEAD_PATH.exists() else None


def run_job(model, factory, head, job: dict, model_name: str = "scenes", trace_dir: Path | None = None) -> dict:
    """Decode one job; its atlas row (and its trace as JSON under trace_dir, when given)."""
    name, over = bench.parse_spec(job["spec"])
    cfg = RunConfig(**({"model": model_name} | over | {"method": name, "prompt": job["prompt"],
                                                        "seed": job["seed"]}))
    t0 = time.perf_counter()
    trace = drain(decode(model, cfg, factory)).trace
    seconds = time.perf_counter() - t0
    image = np.asarray(model.decode_image(torch.tensor(trace.tokens)).convert("RGB"))
    regions = None
    if head is not None:
        from specviz.scenes.regions import predict
        regions = predict(head, image[None])[0]
    row = atlas.record(trace, image, regions, **job, seconds=seconds)
    if trace_dir is not None:
        trace.save(Path(trace_dir) / f"{trace_name(row)}.json")
    return row


def trace_name(row: dict) -> str:
    """A file name for a row's trace: the method spec's and prompt's slugs, a short hash of the key, the seed."""
    import hashlib

    from specviz.render.exports import slug
    digest = hashlib.sha1(atlas.key(row).encode()).hexdigest()[:8]
    return f"{slug(row['spec'], 24)}_{slug(row['prompt'], 24)}_{digest}_s{row['seed']}"


def read_rows(path: Path) -> list[dict]:
    path = Path(path)
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def collect(todo: list[dict], out: Path, load, ray: str | None = None, model_name: str = "scenes",
            progress=None, trace_dir: Path | None = None) -> tuple[list[dict], int]:
    """Run the jobs not yet in `out` (JSONL, one row appended per finished run). `load()` -> (model, factory) for
    local runs; with `ray` ('auto' or an address) each job is a Ray task loading `model_name` itself.
    progress(done, total) is called after each run. Returns (the rows of `todo` from out, new runs)."""
    out = Path(out)
    for j in todo:                                            # validate every spec before any work
        name, over = bench.parse_spec(j["spec"])
        RunConfig(**(over | {"method": name}))
    done = {atlas.key(r) for r in read_rows(out)}
    left = [j for j in todo if atlas.key(j) not in done]
    out.parent.mkdir(parents=True, exist_ok=True)                # --out in a folder that does not exist yet
    rows = _ray_rows(ray, left, model_name) if ray else _local_rows(load, left, model_name, trace_dir)
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
    for j in left:
        yield run_job(model, factory, head, j, model_name, trace_dir)


@functools.lru_cache(maxsize=2)
def _worker_model(model_name: str):
    from specviz.engine.drafters import drafter_factory
    from specviz.models import load_model
    model = load_model(model_name)
    return model, drafter_factory(model), region_head_for(model)


def _ray_rows(address, left, model_name):
    import ray
    ray.init(address=None if address == "auto" else address, ignore_reinit_error=True, include_dashboard=False,
             log_to_driver=False)

    @ray.remote(num_cpus=1)
    def one(job):
        torch.set_num_threads(1)
        return run_job(*_worker_model(model_name), job, model_name)

    pending = [one.remote(j) for j in left]
    while pending:
        finished, pending = ray.wait(pending, num_returns=1)
        yield ray.get(finished[0])


def export(result: dict, stem: Path) -> tuple[list[Path], dict]:
    """Write stem.json (the atlas), stem.png / .pdf (binned small multiples), stem_maps.png / .pdf (mean maps).
    Returns (paths, {'binned': Figure, 'maps': Figure})."""
    from specviz.render import atlas_fig, figures
    stem = Path(stem)
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1))
    paths = [stem.with_suffix(".json")]
    figs = {"binned": atlas_fig.binned_figure(result), "maps": atlas_fig.maps_figure(result)}
    for kind, fig in figs.items():
        name = stem.name if kind == "binned" else f"{stem.name}_maps"
        paths += [figures.save(fig, stem.with_name(name + ext)) for ext in (".png", ".pdf")]
    return paths, figs


def main(args) -> int:
    from specviz.engine.drafters import drafter_factory
    from specviz.models import load_model
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    todo = jobs(args.methods, args.prompts, args.seeds)
    t0, c0 = time.perf_counter(), time.process_time()
    bar = tqdm(total=len(todo), desc="atlas", mininterval=1)

    def tick(done, total):
        bar.n = done
        bar.refresh()

    def load():
        model = load_model(args.model)
        return model, drafter_factory(model)
    if args.traces:
        Path(args.traces).mkdir(parents=True, exist_ok=True)
    rows, new = collect(todo, out, load, args.ray, args.model, tick, args.traces)
    bar.close()
    result = atlas.aggregate(rows)
    result["run"] = {"new_runs": new, "wall_seconds": round(time.perf_counter() - t0, 1),
                     "cpu_seconds_driver": round(time.process_time() - c0, 1), "torch_threads": args.threads,
                     "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    paths, _ = export(result, out.with_suffix(""))
    print(atlas.markdown(result))
    print(json.dumps({"claims": atlas.claims(result), **result["run"]}))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0
