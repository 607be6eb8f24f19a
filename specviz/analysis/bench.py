"""`python -m specviz bench`: the same prompts and seeds for every method in one run; medians (the sweep: sweep.py).

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

from specviz.analysis import paired
from specviz.core import trace as trace_mod
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode
from specviz.engine.methods import all_knobs
from specviz.engine.runner import run
from specviz.models import load_model
from specviz.scenes import ambiguity, data, world
from specviz.scenes.scorer import fidelity, frechet_distance, load_scorer

IMPLAUSIBLE_Q = trace_mod.IMPLAUSIBLE_Q      # a committed code with target q below this: AR draws it rarely


def prompt_set(n: int) -> list[tuple[str, list[int]]]:
    """n fixed captions, alternating held-out and training combinations (deterministic)."""
    rng = np.random.default_rng(2026)
    out = []
    for i in range(n):
        s = data.random_scene(rng, held_out=i % 2 == 0)
        out.append((s.caption(), s.tokens()))
    return out


def cast_knob(name: str, v: str):
    """A knob value from text, as the registry types it (an unknown knob is left to RunConfig to refuse)."""
    k = next((k for k in all_knobs() if k.name == name), None)
    return k.cast(v) if k is not None else v


def parse_spec(spec: str) -> tuple[str, dict]:
    """'csd:lam=0.2,delta=0.8' -> ('csd', {'lam': 0.2, 'delta': 0.8}); a plain method name has no overrides."""
    name, _, rest = spec.partition(":")
    return name, {k: cast_knob(k, v) for k, v in (kv.split("=", 1) for kv in rest.split(",") if kv)}


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
                            "relaxed_positions": relaxed} | _paired(model, cfg, trace))
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
    if r and "changed" in r[0]:                    # keyed noise: paired with AR image by image (docs/methods.md §9)
        agg |= {"changed": _mean(r, "changed"), "changed_se": _se(r, "changed"),
                "identical_share": round(sum(x["changed"] == 0 for x in r) / len(r), 4),
                "step_compression_se": _se(r, "step_compression")}
    hist = np.zeros(64, int)
    for x in r:
        h = np.asarray(x["accepted_hist"])
        hist[:len(h)] += h
    agg["accepted_hist"] = np.trim_zeros(hist, "b").tolist()
    if ar:
        agg["speedup_vs_ar"] = round(st.median(a["seconds"] / x["seconds"] for a, x in zip(ar, r)), 4)
    return agg


def _mean(r: list, k: str) -> float:
    return round(st.mean(x[k] for x in r), 4)


def _se(r: list, k: str) -> float:
    """Standard error of the mean of a per-image paired quantity (0 for one image)."""
    return round(st.stdev(x[k] for x in r) / len(r) ** 0.5, 4) if len(r) > 1 else 0.0


_AR_TOKENS: dict = {}          # (model, AR's keyed config) -> its tokens: one AR run per image across sweep points


def _paired(model, cfg: RunConfig, trace) -> dict:
    """Under keyed noise: the run's changed-token count against AR's tokens for the same prompt, seed and sampling
    knobs (AR is run once per image and remembered); nothing in the papers' mode."""
    if cfg.noise != "keyed":
        return {}
    shared = {k: getattr(cfg, k) for k in paired.SHARED}
    key = (id(model), json.dumps(shared, sort_keys=True))
    if cfg.method == "ar":
        _AR_TOKENS[key] = list(trace.tokens)
    if key not in _AR_TOKENS:
        _AR_TOKENS[key] = run(RunConfig(**shared, method="ar"), model=model).tokens
    return {"changed": len(paired.changed_positions(trace.tokens, _AR_TOKENS[key]))}


def _add_quality(model, rows: dict, out: dict) -> None:
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
    cls = np.concatenate([ambiguity.detail_class(ambiguity.patch_std(img, tuple(grid))).reshape(-1) for img in images])
    return round(float((cls < 2).mean()), 4)


CLIP_ID = "openai/clip-vit-base-patch32"


def clip_scores(images: list, captions: list[str], model_id: str = CLIP_ID) -> tuple[list | None, str]:
    """CLIP score 100 * cos(image, caption) per image, with a locally cached transformers CLIP only (never a
    download). Returns (scores or None, note)."""
    try:
        from transformers import CLIPModel, CLIPProcessor  # optional here: only a locally cached CLIP is used
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
    model = load_model(args.model)
    base = {k: cast_knob(k, v) for k, v in (s.split("=", 1) for s in args.set)} | {"model": args.model}
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


def trace_overhead(model, cfg: RunConfig, images: int = 5) -> dict:
    """Decode time with trace recording on vs off (same seeds, interleaved): medians and the ratio."""
    on, off = [], []
    for s in range(images):
        for rec, acc in ((True, on), (False, off)):
            c = replace(cfg, seed=s)
            t0 = time.perf_counter()
            for _ in decode(model, c, None, record=rec):
                pass
            acc.append(time.perf_counter() - t0)
    return {"on": st.median(on), "off": st.median(off), "overhead": st.median(on) / st.median(off) - 1}
