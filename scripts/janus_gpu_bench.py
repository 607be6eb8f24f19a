"""Janus cost model on a CUDA machine: AR step time vs the memory-bandwidth bound, and verification forwards.

    python scripts/janus_gpu_bench.py                      # Janus-Pro-7B shapes, random bf16 weights (no hub)
    python scripts/janus_gpu_bench.py --model PATH_OR_ID   # real weights when they can be loaded, else random
    python scripts/janus_gpu_bench.py --tiny               # tiny shapes on CPU: a smoke test, seconds

Everything goes through the model boundary (specviz/models/janus.py): prefill, forward, commit. Reported (JSON,
last line of stdout; also --json PATH):
- ar_ms: one AR step (forward of 1 token + commit) with CFG (2 rows) and without (1 row), at --context tokens;
- bound_ms: bytes read per step / HBM bandwidth. Bytes = weights touched per image step (backbone layers + final
  norm + generation aligner and head; the text embeddings and lm_head are not read) + the KV cache read at that
  context. Bandwidth: the nominal figure for the GPU (table below or --bandwidth-gbs) and a measured copy rate;
- verify: forward of a window of 16 (sjd/csd Jacobi chain, causal) and of a 16-node tree (4-D mask), each with
  its commit, as ms and as a ratio to one AR step.
Runs in well under 5 minutes on one H100/H200-class GPU (model build about 10-40 s).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from specviz.models.janus import JanusModel, load_janus  # noqa: E402

NOMINAL_GBS = {"H200": 4800, "H100 SXM": 3350, "H100 NVL": 3900, "H100 PCIe": 2000, "H100": 3350, "GH200": 4000,
               "B200": 8000, "A100-SXM4-80GB": 2039, "A100 80GB PCIe": 1935, "A100": 1555, "L40S": 864,
               "L40": 864, "L4": 300, "A10G": 600, "A10": 600, "T4": 320, "RTX 4090": 1008, "RTX 3090": 936}


def janus_config(tiny: bool):
    """Janus-Pro-7B generation shapes (hidden 4096, 30 layers, 32 heads, MLP 11008, vocab 102400, 16384 codes,
    24x24 grid), or tiny CPU shapes. The understanding vision tower is kept minimal: image generation never runs it."""
    from transformers import JanusConfig
    if tiny:
        text = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=512)
        vision = dict(image_size=64, patch_size=8, num_image_tokens=64)                   # 8x8 grid
        vq = dict(num_embeddings=256, base_channels=32, channel_multiplier=[1, 1], num_res_blocks=1,
                  latent_channels=32)
    else:
        text = dict(vocab_size=102400, hidden_size=4096, intermediate_size=11008, num_hidden_layers=30,
                    num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=16384, rms_norm_eps=1e-6)
        vision = dict(image_size=384, patch_size=16, num_image_tokens=576)                # 24x24 grid
        vq = dict(num_embeddings=16384)
    h = text["hidden_size"]
    return JanusConfig(
        text_config=dict(model_type="llama", pad_token_id=0, bos_token_id=1, eos_token_id=2, **text),
        vision_config=dict(hidden_size=64, num_hidden_layers=1, num_attention_heads=4, projection_dim=h, **vision),
        vq_config=dict(embed_dim=8, projection_dim=h, image_token_embed_dim=h, **vq),
        image_token_id=3)


def random_model(tiny: bool, device: torch.device, dtype: torch.dtype) -> JanusModel:
    """Build the model with random weights directly on `device` (no download)."""
    from transformers import JanusForConditionalGeneration
    torch.manual_seed(0)
    with torch.device(device):
        net = JanusForConditionalGeneration._from_config(janus_config(tiny), dtype=dtype,
                                                         attn_implementation="sdpa")
    gc = net.generation_config
    gc.pad_token_id, gc.bos_token_id, gc.generation_kwargs = 0, 1, {"boi_token_id": 4}
    return JanusModel(net.eval(), None, name=f"random-{'tiny' if tiny else 'janus-pro-7b-shape'}")


def step_bytes(jm: JanusModel, context: int, rows: int) -> dict:
    """Bytes read by one image step: the weights it touches plus the KV cache at `context` tokens."""
    def size(mod, skip=()):
        return sum(p.numel() * p.element_size() for n, p in mod.named_parameters() if not n.startswith(skip))
    weights = (size(jm.lm, skip=("embed_tokens",)) + size(jm.head)
               + size(jm.model.model.generation_aligner))
    c = jm.lm.config
    dh = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    kv = c.num_hidden_layers * 2 * c.num_key_value_heads * dh * jm.dtype.itemsize * rows * context
    return {"weights": weights, "kv": kv, "total": weights + kv}


def measured_gbs(device: torch.device, gib: float) -> float:
    """Device copy rate in GB/s (read + write counted), best of 5."""
    n = int(gib * 2**30) // 2
    a, b = torch.empty(n, dtype=torch.bfloat16, device=device), torch.empty(n, dtype=torch.bfloat16, device=device)
    best = float("inf")
    for _ in range(5):
        t = clock(device)
        b.copy_(a)
        best = min(best, clock(device) - t)
    return 2 * n * 2 / best / 1e9


def clock(device: torch.device) -> float:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter()


def at_context(jm: JanusModel, prompt_len: int, context: int, cfg: float):
    """Prefill a random prompt, then commit `context` image tokens in one chain forward."""
    g = torch.Generator().manual_seed(0)
    ids = [1] + torch.randint(5, jm.model.config.text_config.vocab_size, (prompt_len - 2,), generator=g).tolist() + [4]
    pf = jm.prefill(ids, cfg)
    if context:
        toks = torch.randint(0, jm.codebook_size, (context,), generator=g)
        jm.forward(pf.state, toks, torch.arange(context))
        jm.commit(pf.state, torch.arange(context))
    return pf


def time_ar(jm: JanusModel, pf, context: int, steps: int) -> float:
    """ms per AR step: argmax stays on the device, so the loop does not synchronise per step."""
    tok = pf.logits.argmax().view(1)
    pos = torch.arange(context, context + steps + 3, device=jm.device)    # on the device: no host copies
    t = None
    for i in range(steps + 3):                                            # 3 warm-up steps
        if i == 3:
            t = clock(jm.device)
        logits, _ = jm.forward(pf.state, tok, pos[i:i + 1])
        jm.commit(pf.state, torch.tensor([0]))
        tok = logits[0].argmax().view(1)
    return (clock(jm.device) - t) / steps * 1e3


def tree_mask(n: int, branch: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    """A complete `branch`-ary tree of n nodes in BFS order -> (depths (n,), ancestors-or-self mask (n, n))."""
    parents = [-1] + [(i - 1) // branch for i in range(1, n)]
    depth, mask = torch.zeros(n, dtype=torch.long), torch.eye(n, dtype=torch.bool)
    for i in range(1, n):
        depth[i] = depth[parents[i]] + 1
        mask[i] |= mask[parents[i]]
    return depth, mask


def time_verify(jm: JanusModel, pf, context: int, window: int, tree: bool, reps: int) -> float:
    """ms per verification forward of `window` tokens (+ a commit that keeps nothing, so context stays put)."""
    toks = torch.randint(0, jm.codebook_size, (window,)).to(jm.device)
    depth, mask = tree_mask(window) if tree else (torch.arange(window), None)
    pos, mask = (context + depth).to(jm.device), (None if mask is None else mask.to(jm.device))
    t = None
    for i in range(reps + 2):                                             # 2 warm-up reps
        if i == 2:
            t = clock(jm.device)
        jm.forward(pf.state, toks, pos, mask)
        jm.commit(pf.state, torch.tensor([], dtype=torch.long))
    return (clock(jm.device) - t) / reps * 1e3


def bench(jm: JanusModel, args) -> dict:
    dev = jm.device
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    nominal = args.bandwidth_gbs or next((v for k, v in NOMINAL_GBS.items() if k in name), None)
    measured = measured_gbs(dev, 0.05 if args.tiny else 2.0)
    out = {"device": name, "model": jm.name, "dtype": str(jm.dtype).replace("torch.", ""),
           "context": args.context, "prompt_len": args.prompt_len, "window": args.window,
           "nominal_gbs": nominal, "measured_copy_gbs": round(measured, 1)}
    for label, cfg in (("cfg", args.cfg), ("no_cfg", 1.0)):
        pf = at_context(jm, args.prompt_len, args.context, cfg)
        ctx = args.prompt_len + args.context
        b = step_bytes(jm, ctx, pf.state.rows)
        ar = time_ar(jm, pf, args.context, args.steps)
        chain = time_verify(jm, pf, args.context + args.steps + 3, args.window, False, args.reps)
        tree = time_verify(jm, pf, args.context + args.steps + 3, args.window, True, args.reps)
        bw = (nominal or measured) * 1e9
        out[label] = {"rows": pf.state.rows, "ar_ms": round(ar, 3),
                      "bytes_per_step": b, "bound_ms": round(b["total"] / bw * 1e3, 3),
                      "bound_ms_measured_bw": round(b["total"] / (measured * 1e9) * 1e3, 3),
                      "bound_fraction": round(b["total"] / bw * 1e3 / ar, 3),
                      f"verify_chain{args.window}_ms": round(chain, 3), "verify_chain_over_ar": round(chain / ar, 3),
                      f"verify_tree{args.window}_ms": round(tree, 3), "verify_tree_over_ar": round(tree / ar, 3)}
        del pf
    t = clock(dev)
    jm.decode_image(torch.zeros(jm.grid[0] * jm.grid[1], dtype=torch.long))
    out["decode_image_ms"] = round((clock(dev) - t) * 1e3, 2)
    return out


def build(args) -> JanusModel:
    if args.tiny:
        return random_model(True, torch.device("cpu"), torch.float32)
    dev = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                       ("cpu" if args.device == "auto" else args.device))
    if args.model:
        try:
            return load_janus(args.model, device=dev)
        except (FileNotFoundError, OSError, ValueError) as e:
            print(f"could not load {args.model!r} ({str(e)[:200]}); using random weights", file=sys.stderr)
    if dev.type != "cuda":
        sys.exit("the 7B-shaped bench needs a CUDA device; use --tiny for the CPU smoke test")
    return random_model(False, dev, torch.bfloat16)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="hub id or local checkpoint directory (real weights); default: random")
    ap.add_argument("--tiny", action="store_true", help="tiny shapes on CPU (smoke test)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--context", type=int, default=288, help="image tokens already committed (half the grid)")
    ap.add_argument("--prompt-len", type=int, default=40)
    ap.add_argument("--steps", type=int, default=64, help="timed AR steps")
    ap.add_argument("--reps", type=int, default=20, help="timed verification forwards")
    ap.add_argument("--window", type=int, default=16)
    ap.add_argument("--cfg", type=float, default=5.0)
    ap.add_argument("--bandwidth-gbs", type=float, default=None, help="override the nominal HBM bandwidth")
    ap.add_argument("--json", help="also write the result here")
    args = ap.parse_args(argv)
    if args.tiny:
        torch.set_num_threads(1)
        args.context, args.steps, args.reps = min(args.context, 16), min(args.steps, 8), min(args.reps, 4)
    t0 = time.perf_counter()
    jm = build(args)
    build_s = time.perf_counter() - t0
    with torch.inference_mode():
        out = bench(jm, args)
    out["build_s"], out["total_s"] = round(build_s, 1), round(time.perf_counter() - t0, 1)
    line = json.dumps(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    print(line)
    return out


if __name__ == "__main__":
    main()
