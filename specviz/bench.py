"""`python -m specviz bench` and `sweep`: the same prompts and seeds for every method in one run; medians.

Quality on the embedded model: scorer fidelity (fraction of caption attributes found), a Fréchet distance on scorer
features against real scenes of the same captions, the target NLL of the generated codes (from the trace: -log q of
every committed token), the number of implausible codes per image (committed codes the target gives probability below
IMPLAUSIBLE_Q: the stray blobs a relaxation lets through; AR's own rate is its sampling tail), and the total
relaxation TV cost.
"""
from __future__ import annotations

import json
import statistics as st
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from tqdm import tqdm

from specviz import pareto
from specviz import trace as trace_mod
from specviz.config import RunConfig
from specviz.runner import run
from specviz.scenes import data, world

IMPLAUSIBLE_Q = trace_mod.IMPLAUSIBLE_Q      # a committed code with target q below this: AR draws it rarely


def prompt_set(n: int) -> list[tuple[str, list[int]]]:
    """n fixed captions, alternating held-out and training combinations (deterministic)."""
    rng = np.random.default_rng(2026)
    out = []
    for i in range(n):
        s = data.random_scene(rng, held_out=i % 2 == 0)
        out.append((s.caption(), s.tokens()))
    return out


def _cast(name: str, v: str):
    """A knob value from text, as the registry types it (an unknown knob is left to RunConfig to refuse)."""
    from specviz.methods import all_knobs
    k = next((k for k in all_knobs() if k.name == name), None)
    return k.cast(v) if k is not None else v


def parse_spec(spec: str) -> tuple[str, dict]:
    """'csd:lam=0.2,delta=0.8' -> ('csd', {'lam': 0.2, 'delta': 0.8}); a plain method name has no overrides."""
    name, _, rest = spec.partition(":")
    return name, {k: _cast(k, v) for k, v in (kv.split("=", 1) for kv in rest.split(",") if kv)}


def measure(model, methods: list[str], prompts, seeds: int, base: dict, quality: bool = True,
            progress: bool = True) -> dict:
    """Run every (prompt, seed) for every method spec ('csd' or 'csd:lam=0.2,delta=0.8'), interleaved so machine
    noise hits all methods alike."""
    rows = {m: [] for m in methods}
    jobs = [(p, s) for p in prompts for s in range(seeds)]
    bar = tqdm(total=len(jobs) * len(methods), desc="bench", disable=not progress, mininterval=2)
    for (caption, toks), seed in jobs:
        for m in methods:
            name, over = parse_spec(m)
            cfg = RunConfig(**(base | over | {"method": name, "prompt": caption, "seed": seed}))
            t0 = time.perf_counter()
            trace = run(cfg, model=model)
            secs = time.perf_counter() - t0
            committing = trace.committing()
            q = [ev.p_target for _, ev in committing.values()]
            nll = -float(np.mean(np.log(np.maximum(q, 1e-12))))
            relaxed = sorted(p for p, (_, ev) in committing.items() if ev.decision == "relaxed")
            rows[m].append({"caption": caption, "caption_tokens": toks, "seed": seed, "seconds": secs,
                            "nll": nll, "implausible": implausible(q), **trace.summary, "codes": trace.tokens,
                            "relaxed_positions": relaxed})
            bar.update()
    bar.close()
    out = {m: _aggregate(r, rows.get("ar")) | {"config": parse_spec(m)[1]} for m, r in rows.items()}
    if quality and hasattr(model, "vq") and model.vq is not None:
        _add_quality(model, rows, out)
    return {"methods": out, "runs": rows}


def _aggregate(r: list, ar: list | None) -> dict:
    med = lambda k: round(st.median(x[k] for x in r), 4)
    agg = {"images": len(r), "target_forwards": med("target_forwards"), "step_compression": med("step_compression"),
           "step_compression_mean": round(st.mean(x["step_compression"] for x in r), 4),
           "seconds": med("seconds"), "mean_accepted": med("mean_accepted"), "nll": med("nll"),
           "tv_cost": med("tv_cost"), "implausible": round(st.mean(x["implausible"] for x in r), 3),
           "relaxed_share": round(sum(x["relaxed"] for x in r) / max(1, sum(x["accepted_drafts"] for x in r)), 4)}
    hist = np.zeros(64, int)
    for x in r:
        h = np.asarray(x["accepted_hist"])
        hist[:len(h)] += h
    agg["accepted_hist"] = np.trim_zeros(hist, "b").tolist()
    if ar:
        agg["speedup_vs_ar"] = round(st.median(a["seconds"] / x["seconds"] for a, x in zip(ar, r)), 4)
    return agg


def _add_quality(model, rows: dict, out: dict) -> None:
    from specviz.scenes.scorer import fidelity, frechet_distance, load_scorer
    scorer = load_scorer()
    any_rows = next(iter(rows.values()))
    rng = np.random.default_rng(77)
    real = []
    for x in any_rows:                                    # real scenes of the same captions (4 per caption)
        s = data.scene_from_tokens(x["caption_tokens"])
        real += [world.render(s, rng) for _ in range(4)]
    real_f = scorer.features(np.stack(real))
    for m, r in rows.items():
        imgs = np.stack([np.asarray(model.decode_image(torch.tensor(x["codes"]))) for x in r])
        caps = torch.tensor([x["caption_tokens"] for x in r])
        out[m]["fidelity"] = round(float(np.mean(fidelity(scorer, imgs, caps))), 4)
        out[m]["fid_scorer"] = round(frechet_distance(scorer.features(imgs), real_f), 3)
        out[m]["relaxed_low_mid"] = relaxed_low_mid(imgs, r, model.grid)
        out[m]["low_mid"] = low_mid(imgs, model.grid)
        clip, note = clip_scores([Image.fromarray(i) for i in imgs], [x["caption"] for x in r])
        out[m]["clip"] = round(float(np.mean(clip)), 3) if clip else None
        out[m]["clip_note"] = note


def implausible(q_committed) -> int:
    """How many committed tokens the target gave probability below IMPLAUSIBLE_Q (the bench reports the mean per
    image: counts are small, so a median would hide them)."""
    return trace_mod.count_below(q_committed, IMPLAUSIBLE_Q)


def relaxed_low_mid(images: np.ndarray, runs: list, grid) -> float | None:
    """Share of the relaxed committed tokens whose decoded patch is low- or mid-detail (pixel std below
    ambiguity.DETAIL_EDGES[1] in the image the run produced); None when nothing was relaxed (issue 13)."""
    from specviz.scenes import ambiguity
    hits = total = 0
    for img, x in zip(images, runs):
        pos = x.get("relaxed_positions", [])
        if pos:
            cls = ambiguity.detail_class(ambiguity.patch_std(img, tuple(grid))).reshape(-1)
            hits += int((cls[pos] < 2).sum())
            total += len(pos)
    return round(hits / total, 4) if total else None


def low_mid(images: np.ndarray, grid) -> float:
    """Share of all positions whose decoded patch is low- or mid-detail: the base rate relaxed_low_mid compares with."""
    from specviz.scenes import ambiguity
    cls = np.concatenate([ambiguity.detail_class(ambiguity.patch_std(img, tuple(grid))).reshape(-1) for img in images])
    return round(float((cls < 2).mean()), 4)


CLIP_ID = "openai/clip-vit-base-patch32"


def clip_scores(images: list, captions: list[str], model_id: str = CLIP_ID) -> tuple[list | None, str]:
    """CLIP score 100 * cos(image, caption) per image, with a locally cached transformers CLIP only (never a
    download). Returns (scores or None, note)."""
    try:
        from transformers import CLIPModel, CLIPProcessor
        model = CLIPModel.from_pretrained(model_id, local_files_only=True, use_safetensors=True).eval()
        proc = CLIPProcessor.from_pretrained(model_id, local_files_only=True)
    except (OSError, ValueError, ImportError) as e:
        return None, f"CLIP score skipped: no local copy of {model_id} ({type(e).__name__})"
    with torch.no_grad():
        batch = proc(text=captions, images=images, return_tensors="pt", padding=True)
        out = model(**batch)
        img = torch.nn.functional.normalize(out.image_embeds, dim=-1)
        txt = torch.nn.functional.normalize(out.text_embeds, dim=-1)
    return (100 * (img * txt).sum(-1).clamp_min(0)).tolist(), f"CLIP score with {model_id}"


def markdown(res: dict) -> str:
    cols = ["images", "target_forwards", "step_compression", "seconds", "speedup_vs_ar", "mean_accepted",
            "relaxed_share", "relaxed_low_mid", "low_mid", "tv_cost", "nll", "implausible", "fidelity", "fid_scorer",
            "clip"]
    lines = ["| method | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for m, a in res["methods"].items():
        lines.append(f"| {m} | " + " | ".join("" if a.get(c) is None else str(a[c]) for c in cols) + " |")
    notes = {a["clip_note"] for a in res["methods"].values() if "clip_note" in a}
    return "\n".join(lines + [f"\n{n}" for n in sorted(notes)])


def main(args) -> int:
    from specviz.models import load_model
    model = load_model(args.model)
    base = {k: _cast(k, v) for k, v in (s.split("=", 1) for s in args.set)} | {"model": args.model}
    for m in args.methods:                                # validate every spec once, before any work
        name, over = parse_spec(m)
        RunConfig(**(base | over | {"method": name}))
    res = measure(model, args.methods, prompt_set(args.prompts), args.seeds, base)
    if args.overhead:
        res["trace_overhead"] = trace_overhead(model, RunConfig(**(base | {"method": "csd"})), images=args.overhead)
    res["machine"] = f"{torch.get_num_threads()} torch threads; {time.strftime('%Y-%m-%d')}"
    print(markdown(res))
    if args.json:
        Path(args.json).write_text(json.dumps(res))
    return 0


def lossless_methods() -> frozenset:
    """The registered lossless methods besides AR (the sweep plot's reference points)."""
    from specviz.methods import REGISTRY
    return frozenset(m.name for m in REGISTRY.values() if m.lossless and m.name != "ar")


def sweep_points(params: list[str], values: list[str]) -> list[dict]:
    import itertools
    grids = [[_cast(p, v) for v in vals.split(",")] for p, vals in zip(params, values)]
    return [dict(zip(params, combo)) for combo in itertools.product(*grids)]


def sweep_main(args) -> int:
    if len(args.param) != len(args.values):
        raise ValueError("give one --values list per --param")
    points = sweep_points(args.param, args.values)
    out = Path(args.out)
    rows, new = sweep(args.method, points, prompt_set(args.prompts), args.seeds, out, args.ray)
    fig = pareto.figure(rows, args.measure, lossless_methods())
    fig.savefig(out.with_suffix(".png"), dpi=120)
    fig.savefig(out.with_suffix(".pdf"))
    print(f"{new} new points, {len(rows)} in {out}; plot: {out.with_suffix('.png')}")
    return 0


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
    results = _ray_points(ray, method, todo, prompts, seeds, model_name) if ray else \
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
    from specviz.models import load_model
    res = measure(load_model(model_name), [method], prompts, seeds, {**p, "model": model_name}, progress=False)
    return p, res["methods"][method]


def _local_points(method, todo, prompts, seeds, model_name):
    for p in tqdm(todo, desc="sweep"):
        yield _point(method, p, prompts, seeds, model_name)


def _ray_points(address, method, todo, prompts, seeds, model_name):
    import ray
    ray.init(address=None if address == "auto" else address, ignore_reinit_error=True,
             include_dashboard=False, log_to_driver=False)

    @ray.remote(num_cpus=1)
    def task(p):
        torch.set_num_threads(1)
        return _point(method, p, prompts, seeds, model_name)

    pending = [task.remote(p) for p in todo]
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        yield ray.get(ready[0])


def trace_overhead(model, cfg: RunConfig, images: int = 5) -> dict:
    """Decode time with trace recording on vs off (same seeds, interleaved): medians and the ratio."""
    from specviz.decode import decode
    on, off = [], []
    for s in range(images):
        for rec, acc in ((True, on), (False, off)):
            c = replace(cfg, seed=s)
            t0 = time.perf_counter()
            for _ in decode(model, c, None, record=rec):
                pass
            acc.append(time.perf_counter() - t0)
    return {"on": st.median(on), "off": st.median(off), "overhead": st.median(on) / st.median(off) - 1}
