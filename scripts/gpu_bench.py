"""Backend-agnostic cost of the decoding primitives on a CUDA machine, through the model boundary only.

    python scripts/gpu_bench.py --family llamagen                  # LlamaGen-XL t2i shapes (256 px), random bf16
    python scripts/gpu_bench.py --family llamagen --image-size 512 # 32x32 grid
    python scripts/gpu_bench.py --family janus                     # Janus-Pro-7B shapes (scripts/janus_gpu_bench.py)
    python scripts/gpu_bench.py --model DIR_OR_ID                  # real weights (any backend load_model knows)
    python scripts/gpu_bench.py --family llamagen --tiny           # tiny shapes on CPU: a smoke test, seconds

Times, after a prefill and --context committed image tokens: one AR step (forward of 1 token + commit) with CFG
(2 rows) and without (1 row); a --window-token Jacobi window (causal) and a --window-node tree (4-D mask), each
with its commit, as ms and as a ratio to one AR step. JSON on the last stdout line (and --json PATH).
Random weights are built directly on the device with the real shapes: no hub, no conversion.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specviz.engine.drafters.draft_tree import ancestor_rows  # noqa: E402


def llamagen_random(tiny: bool, image_size: int, device, dtype):
    from specviz.models.llamagen import LlamaGenModel
    from specviz.models.llamagen_net import GPTConfig, LlamaGenGPT, ffn_hidden
    cfg = (GPTConfig(dim=64, n_layer=2, n_head=4, ffn_hidden=ffn_hidden(64), vocab_size=256, caption_dim=32, grid=8)
           if tiny else GPTConfig(grid=image_size // 16))                       # GPT-XL t2i
    torch.manual_seed(0)
    with torch.device(device):
        gpt = LlamaGenGPT(cfg).to(dtype)
    return LlamaGenModel(gpt, None, name=f"random-llamagen-{'tiny' if tiny else 'xl'}")


def janus_random(tiny: bool, device, dtype):
    from janus_gpu_bench import random_model
    return random_model(tiny, device, dtype)


def prompt_for(model, length: int):
    """A prompt the backend accepts without a tokenizer: caption vectors (LlamaGen) or token ids (Janus)."""
    from specviz.models.llamagen import LlamaGenModel
    if isinstance(model, LlamaGenModel):
        c = model.gpt.cfg
        return torch.randn(c.cls_token_num, c.caption_dim), torch.arange(c.cls_token_num) < length
    return [1] + [5] * (length - 2) + [4]


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def timed(fn, device, reps: int) -> float:
    for _ in range(3):                                                      # warm-up
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


def bench(model, device, args) -> dict:
    n_pos = model.grid[0] * model.grid[1]
    ctx = min(args.context, n_pos - args.window - 2)
    out = {"model": model.name, "grid": list(model.grid), "context": ctx, "device": str(device)}
    if device.type == "cuda":
        out["gpu"] = torch.cuda.get_device_name(device)
    for cfg, key in ((args.cfg, "cfg"), (1.0, "no_cfg")):
        pf = model.prefill(prompt_for(model, args.prompt_len), cfg)
        for s in range(0, ctx, 64):                                         # commit the context in chunks
            k = min(64, ctx - s)
            model.forward(pf.state, torch.randint(0, model.codebook_size, (k,)), torch.arange(s, s + k))
            model.commit(pf.state, torch.arange(k))
        tok = torch.tensor([7])

        def ar():
            model.forward(pf.state, tok, torch.tensor([ctx]))
            model.commit(pf.state, torch.arange(0))

        out[f"ar_ms_{key}"] = timed(ar, device, args.steps)
        if key == "cfg":
            win = torch.randint(0, model.codebook_size, (args.window,))

            def window():
                model.forward(pf.state, win, torch.arange(ctx, ctx + args.window))
                model.commit(pf.state, torch.arange(0))

            mask, pos = tree_mask(args.window, 4)

            def tree():
                model.forward(pf.state, win, ctx + pos, mask)
                model.commit(pf.state, torch.arange(0))

            out["window_ms"] = timed(window, device, args.reps)
            out["tree_ms"] = timed(tree, device, args.reps)
            out["window_over_ar"] = out["window_ms"] / out["ar_ms_cfg"]
            out["tree_over_ar"] = out["tree_ms"] / out["ar_ms_cfg"]
    if device.type == "cuda":
        out["peak_gb"] = torch.cuda.max_memory_allocated(device) / 1e9
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", default="llamagen", choices=["llamagen", "janus"])
    ap.add_argument("--model", default=None, help="a checkpoint load_model knows (else random weights)")
    ap.add_argument("--image-size", type=int, default=256, choices=[256, 512], help="LlamaGen random shapes")
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--context", type=int, default=128, help="image tokens committed before timing")
    ap.add_argument("--prompt-len", type=int, default=24, help="valid prompt tokens")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--window", type=int, default=16)
    ap.add_argument("--cfg", type=float, default=7.5)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    device = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if args.model:
        from specviz.models import load_model
        model = load_model(args.model, str(device))
    elif args.family == "llamagen":
        model = llamagen_random(args.tiny, args.image_size, device, dtype)
    else:
        model = janus_random(args.tiny, device, dtype)
    with torch.inference_mode():
        out = bench(model, device, args)
    line = json.dumps(out)
    if args.json:
        Path(args.json).write_text(line + "\n")
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
