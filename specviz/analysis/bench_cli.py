"""`python -m specviz bench`: its arguments, prompts, quality passes and tables (the measuring: bench.py)."""
from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from specviz.analysis import bench, paper, prompts, quality
from specviz.core.numbers import gib
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode
from specviz.engine.registry import METHODS
from specviz.models import is_embedded, load_model


def add_arguments(be) -> None:
    be.add_argument("--model", default="scenes")
    be.add_argument("--prompts", default="8", help="N (that many captions of the scenes grammar), parti, coco, or "
                    "a FILE: one prompt a line, or the Prompt/prompt/caption/text (else first) column of a .tsv/.csv")
    be.add_argument("--limit", type=int, default=None, help="keep the first N prompts (after --shuffle)")
    be.add_argument("--shuffle", type=int, default=None, metavar="SEED", help="permute the prompts with this seed")
    be.add_argument("--seeds", type=int, default=2)
    be.add_argument("--methods", nargs="+", default=list(METHODS),
                    help="method specs: a name, or name:knob=value,... e.g. csd:lam=0.2,delta=0.8")
    be.add_argument("--clip", default=None, metavar="MODEL", help="CLIP score with this CLIP (hub id or directory; "
                    f"the papers use {quality.CLIP_PAPERS})")
    be.add_argument("--fid-ref", default=None, metavar="DIR", help="FID (torchmetrics) against the images in DIR")
    be.add_argument("--table", default="bench", choices=["bench", "paper"], help="our columns, or the papers' layout")
    be.add_argument("--out", default=None, help="resumable JSONL of the rows (a re-run skips the rows in it)")
    be.add_argument("--ray", default=None, help="run on Ray actors: 'auto' or a cluster address")
    be.add_argument("--workers", type=int, default=None, help="Ray actors (default: one per GPU, else per CPU)")
    be.add_argument("--overhead", type=int, default=0, help="also time csd with trace recording on vs off (images)")
    be.add_argument("--json", default=None)
    be.add_argument("--set", nargs="*", default=[], help="extra knobs, e.g. lam=0.2 delta=0.8")


def resolve_prompts(spec: str, model_name: str, limit=None, shuffle=None) -> tuple[list, list[str]]:
    """[(text, caption tokens or None)] and the prompts refused (scenes: those its grammar cannot say)."""
    if spec.isdigit():
        return prompts.select(bench.prompt_set(int(spec)), limit, shuffle), []
    texts = prompts.load(spec, limit, shuffle)
    if not is_embedded(model_name):
        return [(t, None) for t in texts], []
    kept, refused = prompts.for_scenes(texts)
    if refused:
        sys.stderr.write(prompts.refusal_line(refused, len(texts)) + "\n")
    if not kept:
        raise ValueError(f"the scenes model can say none of the {len(texts)} prompts of {spec}")
    return kept, refused


def add_library_quality(res: dict, images: dict, clip: str | None, fid_ref: str | None, feature=None) -> None:
    """CLIP and FID columns per method (quality.py) from the decoded images."""
    model = quality.load_clip(clip) if clip else None
    size = next(iter(images.values()))[0].size
    ref = quality.reference_images(fid_ref, size) if fid_ref else None
    for m, ims in images.items():
        a = res["methods"][m]
        if model is not None:
            a["clip"] = round(float(np.mean(quality.clip_scores(ims, [x["caption"] for x in res["runs"][m]], model))),
                              4)
        if ref is not None:
            a["fid"] = round(quality.fid(ims, ref, feature), 4)
    res["quality"] = {"clip_model": clip, "clip": "100 x max(cos, 0), mean over images" if clip else None,
                      "fid_ref": fid_ref, "fid_reference_images": len(ref) if ref else None}


def markdown(res: dict) -> str:
    cols = ["images", "target_forwards", "step_compression", "seconds", "forward_seconds", "engine_seconds",
            "speedup_vs_ar", "mean_accepted",
            "relaxed_share", "relaxed_low_mid", "low_mid", "tv_cost", "nll", "implausible", "fidelity", "fid_scorer",
            "clip", "fid", "peak_memory"]
    lines = ["| method | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for m, a in res["methods"].items():
        cell = lambda c: "" if a.get(c) is None else (gib(a[c]) if c == "peak_memory" else str(a[c]))
        lines.append(f"| {m} | " + " | ".join(cell(c) for c in cols) + " |")
    return "\n".join(lines)


def main(args) -> int:
    base = {k: bench.cast_knob(k, v) for k, v in (s.split("=", 1) for s in args.set)} | {"model": args.model}
    for m in args.methods:                                # validate every spec once, before any work
        name, over = bench.parse_spec(m)
        RunConfig(**(base | over | {"method": name}))
    todo, refused = resolve_prompts(args.prompts, args.model, args.limit, args.shuffle)
    need_model = not args.ray or args.clip or args.fid_ref or is_embedded(args.model) or args.overhead
    model = load_model(args.model) if need_model else None
    res = bench.measure(model, args.methods, todo, args.seeds, base, out=args.out, ray=args.ray,
                        workers=args.workers)
    if args.clip or args.fid_ref:
        add_library_quality(res, bench.decode_all(model, res["runs"]), args.clip, args.fid_ref)
    res["prompts"] = {"source": args.prompts, "used": len(todo), "refused": refused}
    if args.overhead:
        res["trace_overhead"] = trace_overhead(model, RunConfig(**(base | {"method": "csd"})), images=args.overhead)
    res["machine"] = f"{torch.get_num_threads()} torch threads; {time.strftime('%Y-%m-%d')}"
    res["paper"] = paper.rows(res)
    print(paper.markdown(res) if args.table == "paper" else markdown(res))
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
    on, off = statistics.median(on), statistics.median(off)
    return {"on": on, "off": off, "overhead": on / off - 1}
