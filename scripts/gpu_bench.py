"""The prepared GPU command: cost of the decoding primitives and of every method, through the model boundary.

    python scripts/gpu_bench.py --all                      # Janus-Pro-7B, LlamaGen-XL, Lumina-mGPT-7B layouts, random
                                                           # bf16 weights built on the GPU: the whole report
    python scripts/gpu_bench.py --all --tiny               # the same code paths at tiny shapes on the CPU (seconds)
    python scripts/gpu_bench.py --family llamagen          # one layout (janus | llamagen | lumina)
    python scripts/gpu_bench.py --model DIR_OR_ID          # real weights (any backend load_model knows)

Per layout, after a prefill and --context committed image tokens (models/layouts.py builds them; no hub):
- ms per AR step (a 1-token forward + its commit) with CFG (2 rows) and without (1 row), per --window-token Jacobi
  window (causal) and per --tree-node tree (4-D mask), each with its commit: eager, then compiled (model.compile():
  fixed-shape forwards padded to a bucket, torch.compile mode reduce-overhead = CUDA graphs; the CFG rows only, and
  no compile starts after --budget-s seconds);
- beside each, the HBM lower bound: the weight bytes one step reads / the card's nominal bandwidth (layouts.CARDS:
  H200 4.8, H100 SXM 3.35, A100 80GB 2.0 TB/s, matched on the device name; otherwise 'unknown' and no bound);
- engine ms per verification step for every registered method, through decode() with the real backend (tree
  methods draft with the target itself as the draft model), over --engine-steps steps after two warm-up steps;
- peak GPU memory per layout; and one 4-method race (ar, sjd, mcsjd, csd) over a whole Janus-layout image: wall
  seconds, target forwards and step compression per method.
A human-readable table on stderr; JSON on the last stdout line (and --json PATH). Compiled timings are skipped on the
CPU (inductor compiles for minutes there; tests/models/test_compile.py checks compiled tokens) unless --compile-cpu.
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specviz.engine.config import RunConfig  # noqa: E402
from specviz.engine.decode import decode, drain  # noqa: E402
from specviz.engine.drafters import drafter_factory  # noqa: E402
from specviz.engine.drafters.draft_tree import ancestor_rows  # noqa: E402
from specviz.engine.registry import METHODS  # noqa: E402
from specviz.models import layouts  # noqa: E402

RACE = ("ar", "sjd", "mcsjd", "csd")
FAMILIES = {"janus": layouts.janus, "llamagen": layouts.llamagen, "lumina": layouts.lumina}


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def timed(fn, device, reps: int) -> float:
    """The mean ms of `reps` calls after 3 warm-up calls (the warm-up also captures a compiled graph)."""
    for _ in range(3):
        fn()
    sync(device)
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    sync(device)
    return (time.perf_counter() - t) / reps * 1e3


def tree_mask(n: int, width: int):
    """A tree of n nodes: the root, then levels of `width` siblings under the first node of the level above."""
    parents, depth, pos, first = [-1], [0], [0], 0
    while len(parents) < n:
        level = depth[-1] + 1
        start = len(parents)
        for _ in range(min(width, n - len(parents))):
            parents.append(first), depth.append(level), pos.append(level)
        first = start
    return torch.tensor(ancestor_rows(parents)), torch.tensor(pos)


def bound_ms(step_bytes: int, tbs: float | None) -> float | None:
    """The HBM lower bound of one step: its weight bytes read once at the card's nominal bandwidth (TB/s)."""
    return None if tbs is None else step_bytes / (tbs * 1e12) * 1e3


def primitives(model, prompt, device, args, no_cfg: bool = True) -> dict:
    """AR / window / tree forward + commit ms at --context committed tokens (the context filled in window chunks);
    no_cfg: also the AR step with one row (compiled: left out, a graph fewer to capture)."""
    n_pos = model.grid[0] * model.grid[1]
    ctx = max(0, min(args.context, n_pos - args.tree - 2))
    out = {"context": ctx}
    for cfg, key in ((args.cfg, "cfg"), (1.0, "no_cfg"))[:2 if no_cfg else 1]:
        pf = model.prefill(prompt, cfg)
        for s in range(0, ctx, args.window):
            k = min(args.window, ctx - s)
            model.forward(pf.state, torch.randint(0, model.codebook_size, (k,)), torch.arange(s, s + k))
            model.commit(pf.state, torch.arange(k))
        tok = torch.tensor([7])

        def ar():
            model.forward(pf.state, tok, torch.tensor([ctx]))
            model.commit(pf.state, torch.arange(0))

        out[f"ar_ms_{key}"] = timed(ar, device, args.steps)
        if key == "cfg":
            win = torch.randint(0, model.codebook_size, (max(args.window, args.tree),))
            mask, pos = tree_mask(args.tree, 4)

            def window():
                model.forward(pf.state, win[:args.window], torch.arange(ctx, ctx + args.window))
                model.commit(pf.state, torch.arange(0))

            def tree():
                model.forward(pf.state, win[:args.tree], ctx + pos, mask)
                model.commit(pf.state, torch.arange(0))

            out["window_ms"] = timed(window, device, args.reps)
            out["tree_ms"] = timed(tree, device, args.reps)
    return out


def engine_steps(model, prompt, device, args) -> dict:
    """ms per verification step of every registered method through decode() (two warm-up steps, then timed)."""
    out = {}
    factory = drafter_factory(model, model)                     # tree methods: the target drafts for itself
    for name in METHODS:
        cfg = RunConfig(method=name, prompt=prompt, seed=0, cfg=args.cfg)
        try:
            it = decode(model, cfg, factory, record=False)
            for _ in range(2):                                  # warm-up (and, compiled, the capture)
                next(it)
            sync(device)
            t, k = time.perf_counter(), 0
            for p in it:
                k += 1
                if k >= args.engine_steps or p.done:
                    break
            sync(device)
            out[name] = {"ms_per_step": (time.perf_counter() - t) / max(k, 1) * 1e3, "steps": k}
        except (ValueError, RuntimeError, StopIteration) as e:           # recorded, the bench goes on
            out[name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"}
    return out


def race(model, prompt, device, cfg_scale: float) -> dict:
    """One image per method, the same prompt and seed: wall seconds, target forwards, step compression."""
    out = {}
    for name in RACE:
        sync(device)
        t = time.perf_counter()
        s = drain(decode(model, RunConfig(method=name, prompt=prompt, seed=0, cfg=cfg_scale), None)).trace.summary
        sync(device)
        out[name] = {"seconds": time.perf_counter() - t, "target_forwards": s["target_forwards"],
                     "tokens": s["tokens"], "step_compression": s["step_compression"]}
    return out


def one_layout(build, device, dtype, args, with_race: bool) -> dict:
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    t = time.perf_counter()
    lay = build(args.tiny, device, dtype)
    model = lay.model
    out = {"layout": lay.name, "model": model.name, "grid": list(model.grid), "codebook": model.codebook_size,
           "build_s": time.perf_counter() - t, "step_weight_bytes": lay.step_bytes}
    with torch.inference_mode():
        out["eager"] = primitives(model, lay.prompt, device, args)
        out["engine"] = engine_steps(model, lay.prompt, device, args)
        if with_race:
            out["race"] = race(model, lay.prompt, device, args.cfg)
        if (device.type == "cuda" or args.compile_cpu) and time.perf_counter() - args.t0 < args.budget_s:
            t = time.perf_counter()
            model.compile()
            out["compiled"] = primitives(model, lay.prompt, device, args, no_cfg=False)
            out["compiled"]["with_compile_s"] = time.perf_counter() - t
        elif device.type == "cuda" or args.compile_cpu:
            out["compiled"] = {"skipped": f"--budget-s {args.budget_s:.0f} s spent before this layout's compile"}
        else:
            out["compiled"] = None
    if device.type == "cuda":
        out["peak_gb"] = torch.cuda.max_memory_allocated(device) / 1e9
    return out


def with_bounds(res: dict, tbs: float | None) -> dict:
    b = bound_ms(res["step_weight_bytes"], tbs)
    res["bound_ms"] = b
    for mode in ("eager", "compiled"):
        if res.get(mode) and "ar_ms_cfg" in res[mode] and b:
            res[mode]["ar_over_bound"] = res[mode]["ar_ms_cfg"] / b
    return res


def table(results: list, card: str, tbs) -> str:
    """The report as Markdown (stderr)."""
    lines = [f"card: {card} ({tbs} TB/s)" if tbs else f"card: {card} (no HBM bound)", "",
             "| layout | mode | AR ms (CFG) | AR ms (no CFG) | window ms | tree ms | HBM bound ms |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        for mode in ("eager", "compiled"):
            p = r.get(mode)
            if p and "ar_ms_cfg" in p:
                bound = f"{r['bound_ms']:.2f}" if r["bound_ms"] else "unknown"
                one = f"{p['ar_ms_no_cfg']:.2f}" if "ar_ms_no_cfg" in p else "-"
                lines.append(f"| {r['layout']} | {mode} | {p['ar_ms_cfg']:.2f} | {one} | "
                             f"{p['window_ms']:.2f} | {p['tree_ms']:.2f} | {bound} |")
            elif p:
                lines.append(f"| {r['layout']} | {mode} | {p['skipped']} | | | | |")
    for r in results:
        lines += ["", f"engine ms per step, {r['layout']}: " + ", ".join(
            f"{m} {v['ms_per_step']:.1f}" if "ms_per_step" in v else f"{m} ({v['error']})"
            for m, v in r["engine"].items())]
        if "race" in r:
            lines += [f"race on {r['layout']}: " + ", ".join(
                f"{m} {v['seconds']:.2f} s / {v['target_forwards']} forwards" for m, v in r["race"].items())]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="every layout, the engine per method and the race")
    ap.add_argument("--family", default="llamagen", choices=list(FAMILIES))
    ap.add_argument("--model", default=None, help="a checkpoint load_model knows (else random weights)")
    ap.add_argument("--tiny", action="store_true", help="tiny shapes (the CPU smoke test)")
    ap.add_argument("--image-size", type=int, default=256, choices=[256, 512], help="LlamaGen-XL: 16x16 or 32x32")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--context", type=int, default=128, help="image tokens committed before timing")
    ap.add_argument("--steps", type=int, default=50, help="timed AR steps")
    ap.add_argument("--reps", type=int, default=20, help="timed window / tree forwards")
    ap.add_argument("--window", type=int, default=16)
    ap.add_argument("--tree", type=int, default=25, help="tree nodes")
    ap.add_argument("--engine-steps", type=int, default=8)
    ap.add_argument("--cfg", type=float, default=4.0)
    ap.add_argument("--compile-cpu", action="store_true", help="also time compiled forwards on the CPU (minutes)")
    ap.add_argument("--budget-s", type=float, default=330.0,
                    help="no compile starts after this many seconds (keeps --all under 8 minutes)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    device = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    card, tbs = layouts.card(name) if device.type == "cuda" else ("cpu", None)
    t0 = args.t0 = time.perf_counter()
    FAMILIES["llamagen"] = functools.partial(layouts.llamagen, grid=args.image_size // 16)
    if args.model:
        from specviz.models import load_model  # real weights: only when asked for

        def build(tiny, dev, dt):
            m = load_model(args.model, str(dev))
            return layouts.Layout(args.model, m, "a red house on a hill", 0)
        builds = [build]
    else:
        builds = list(FAMILIES.values()) if args.all else [FAMILIES[args.family]]
    results = [with_bounds(one_layout(b, device, dtype, args, with_race=args.all and i == 0), tbs)
               for i, b in enumerate(builds)]
    out = {"device": str(device), "device_name": name, "card": card, "tb_per_s": tbs, "dtype": str(dtype),
           "tiny": args.tiny, "total_s": time.perf_counter() - t0, "layouts": results}
    print(table(results, card, tbs), file=sys.stderr)
    line = json.dumps(out)
    if args.json:
        Path(args.json).write_text(line + "\n")
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
