"""`python -m specviz bench`: the same prompts and seeds for every method in one run; medians (the sweep: sweep.py).

One row per (method spec, prompt, seed), computed by run_job; collect() runs the rows not yet in an optional JSONL
file (a re-run skips them), in this process or on Ray actors (bench_ray.py). Per row: wall seconds, peak memory
(core.memory), the target NLL of the generated codes (from the trace: -log q of every committed token), the number of
implausible codes (committed codes the target gives probability below IMPLAUSIBLE_Q: the stray blobs a relaxation
lets through; AR's own rate is its sampling tail), the trace summary and the codes. Quality columns: quality.py;
the command and its tables: bench_cli.py, paper.py.
"""
from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from specviz.analysis import bench_ray, paired_run
from specviz.core import memory
from specviz.core import trace as trace_mod
from specviz.core.numbers import standard_error
from specviz.engine.config import RunConfig
from specviz.engine.registry import all_knobs
from specviz.models import is_embedded, load_model
from specviz.models.runner import run
from specviz.scenes import data

IMPLAUSIBLE_Q = trace_mod.IMPLAUSIBLE_Q      # a committed code with target q below this: AR draws it rarely
VOLATILE = ("seconds", "forward_seconds", "engine_seconds", "peak_memory")   # fields that differ between two runs


def prompt_set(n: int) -> list[tuple[str, list[int]]]:
    """n fixed captions, alternating held-out and training combinations (deterministic)."""
    rng = np.random.default_rng(2026)
    out = []
    for i in range(n):
        s = data.random_scene(rng, held_out=i % 2 == 0)
        out.append((s.caption(), s.tokens()))
    return out


def knob(name: str):
    return next((k for k in all_knobs() if k.name == name), None)


def cast_knob(name: str, v: str):
    """A knob value from text, as the registry types it (an unknown knob is left to RunConfig to refuse)."""
    k = knob(name)
    return k.cast(v) if k is not None else v


def parse_spec(spec: str) -> tuple[str, dict]:
    """'csd:lam=0.2,delta=0.8' -> ('csd', {'lam': 0.2, 'delta': 0.8}); a plain method name has no overrides."""
    name, _, rest = spec.partition(":")
    return name, {k: cast_knob(k, v) for k, v in (kv.split("=", 1) for kv in rest.split(",") if kv)}


def jobs(methods: list[str], prompts, seeds: int) -> list[dict]:
    """Every (prompt, seed) for every method spec, interleaved by image so machine noise hits all methods alike.
    prompts: [(text, caption tokens or None)]."""
    return [{"spec": m, "index": i, "caption": cap, "caption_tokens": toks, "seed": s}
            for i, (cap, toks) in enumerate(prompts) for s in range(seeds) for m in methods]


def key(job: dict) -> str:
    return json.dumps([job["spec"], job["index"], job["caption"], job["seed"]])


def run_job(model, job: dict, base: dict) -> dict:
    """Decode one job; its row."""
    name, over = parse_spec(job["spec"])
    cfg = RunConfig(**(base | over | {"method": name, "prompt": job["caption"], "seed": job["seed"]}))
    if cfg.draft_model:
        load_model(cfg.draft_model)                   # cached: its loading stays out of the first image's time
    device = getattr(model, "device", "cpu")
    memory.reset_peak(device)
    t0 = time.perf_counter()
    trace = run(cfg, model=model)
    secs = time.perf_counter() - t0
    committing = trace.committing()
    q = [ev.p_target for _, ev in committing.values()]
    nll = trace_mod.mean_nll(q)
    relaxed = sorted(p for p, (_, ev) in committing.items() if ev.decision == "relaxed")
    return {**job, "seconds": secs, "peak_memory": memory.peak_memory(device), "nll": nll,
            "implausible": implausible(q), **trace.summary, "codes": trace.tokens,
            "relaxed_positions": relaxed} | _paired(model, cfg, trace)


def _paired(model, cfg: RunConfig, trace) -> dict:
    """Under keyed noise: the run's changed-token count against AR's tokens for the same image (paired_run: AR run
    once per image and remembered); nothing in the papers' mode."""
    p = paired_run.against_ar(model, cfg, trace)
    return {} if p is None else {"changed": p.count}


def implausible(q_committed) -> int:
    """How many committed tokens the target gave probability below IMPLAUSIBLE_Q (the bench reports the mean per
    image: counts are small, so a median would hide them)."""
    return trace_mod.count_below(q_committed, IMPLAUSIBLE_Q)


def read_rows(path: Path | None) -> list[dict]:
    """The rows of a JSONL file; a last line cut short by a crash is dropped (its job runs again)."""
    if path is None or not Path(path).exists():
        return []
    rows = []
    for line in Path(path).read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def collect(model_or_load, todo: list[dict], base: dict, out: Path | None = None, ray: str | None = None,
            workers: int | None = None, progress: bool = True) -> tuple[list[dict], int]:
    """Run the jobs of `todo` not yet in `out` (one JSON row appended per finished image), in this process (a model,
    or a callable loading it) or with `ray` ('auto' or an address) on actors that load base['model'] themselves.
    Returns (the rows of todo, in todo's order; how many ran now)."""
    done = {key(r): r for r in read_rows(out)}
    left = [j for j in todo if key(j) not in done]
    bar = tqdm(total=len(todo), initial=len(todo) - len(left), desc="bench", disable=not progress, mininterval=2,
               unit="image")                                         # tqdm's remaining time is the ETA
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        _end_line(Path(out))
    rows = bench_ray.ray_rows(ray, base, left, workers, run_job) if ray else _local(model_or_load, left, base)
    n = 0
    for row in rows:
        done[key(row)] = row
        if out is not None:
            with Path(out).open("a") as f:
                f.write(json.dumps(row) + "\n")
        n += 1
        bar.update()
    bar.close()
    return [done[key(j)] for j in todo], n


def _end_line(path: Path) -> None:
    """A line cut short by a crash gets its newline, so the next row starts a line of its own."""
    if path.exists() and path.stat().st_size:
        with path.open("rb+") as f:
            f.seek(-1, 2)
            if f.read(1) != b"\n":
                f.write(b"\n")


def _local(model_or_load, left, base):
    if not left:
        return
    model = model_or_load() if callable(model_or_load) else model_or_load
    for j in left:
        yield run_job(model, j, base)


def measure(model, methods: list[str], prompts, seeds: int, base: dict, quality: bool = True,
            progress: bool = True, **collect_kw) -> dict:
    """Rows of every (prompt, seed) for every method spec ('csd' or 'csd:lam=0.2,delta=0.8'), aggregated per method;
    the embedded model's quality columns when `quality` and the model is `scenes`."""
    rows, _ = collect(model, jobs(methods, prompts, seeds), base, progress=progress, **collect_kw)
    by = {m: [r for r in rows if r["spec"] == m] for m in methods}
    out = {m: aggregate(r, by.get("ar")) | {"config": parse_spec(m)[1]} for m, r in by.items()}
    if quality and is_embedded(getattr(model, "name", "")) and all(r["caption_tokens"] for r in rows):
        from specviz.analysis import quality as q  # scorer weights: only a quality pass reads them
        q.add_embedded(model, by, out, decode_all(model, by))
    return {"methods": out, "runs": by}


def decode_all(model, by: dict) -> dict:
    """method -> its images (PIL, RGB), decoded from the rows' codes."""
    import torch  # the codes become a tensor for the model's decoder
    return {m: [model.decode_image(torch.tensor(x["codes"])).convert("RGB") for x in r] for m, r in by.items()}


def hist_bins() -> int:
    """Bins of an accepted-length histogram: 0 .. the window knob's upper bound (the most a Jacobi step commits)."""
    return int(knob("window").hi) + 1


def pooled_hist(r: list) -> list[int]:
    """The rows' accepted-length histograms summed (steps that committed k tokens, k = 0, 1, ...), trailing zeros cut;
    a histogram longer than hist_bins() (a tree step past the window bound) widens the sum instead of failing."""
    hists = [np.asarray(x["accepted_hist"], int) for x in r]
    total = np.zeros(max([hist_bins()] + [len(h) for h in hists]), int)
    for h in hists:
        total[:len(h)] += h
    return np.trim_zeros(total, "b").tolist()


def aggregate(r: list, ar: list | None) -> dict:
    med = lambda k: round(statistics.median(x[k] for x in r), 4)
    agg = {"images": len(r), "target_forwards": med("target_forwards"), "step_compression": med("step_compression"),
           "step_compression_mean": round(statistics.mean(x["step_compression"] for x in r), 4),
           "seconds": med("seconds"), "mean_accepted": med("mean_accepted"), "nll": med("nll"),
           "tv_cost": med("tv_cost"), "implausible": round(statistics.mean(x["implausible"] for x in r), 3),
           "implausible_se": _se(r, "implausible"),
           "relaxed_share": round(sum(x["relaxed"] for x in r) / max(1, sum(x["accepted_drafts"] for x in r)), 4),
           "accepted_hist": pooled_hist(r), "peak_memory": max(x.get("peak_memory", 0) for x in r)}
    if r and all("forward_seconds" in x for x in r):      # rows of runs whose forwards were clocked (engine/clock.py)
        agg |= {"forward_seconds": med("forward_seconds"), "engine_seconds": med("engine_seconds")}
    if r and "changed" in r[0]:                    # keyed noise: paired with AR image by image (docs/methods.md §9)
        agg |= {"changed": _mean(r, "changed"), "changed_se": _se(r, "changed"),
                "identical_share": round(sum(x["changed"] == 0 for x in r) / len(r), 4),
                "step_compression_se": _se(r, "step_compression")}
    if ar:
        by_image = {(a["index"], a["seed"]): a["seconds"] for a in ar}
        ratios = [by_image[(x["index"], x["seed"])] / x["seconds"] for x in r if (x["index"], x["seed"]) in by_image]
        if ratios:
            agg["speedup_vs_ar"] = round(statistics.median(ratios), 4)
    return agg


def _mean(r: list, k: str) -> float:
    return round(statistics.mean(x[k] for x in r), 4)


def _se(r: list, k: str) -> float:
    """Standard error of the mean of a per-image quantity (0 for one image), rounded as the bench's columns."""
    return round(standard_error(x[k] for x in r), 4)
