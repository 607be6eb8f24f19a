"""Pin specviz's LlamaGen backend to the reference implementation.

    python scripts/pin_llamagen.py /path/to/LlamaGen [--out tests/fixtures/llamagen_ref.safetensors]

Given a local copy of FoundationVision/LlamaGen, builds the reference t2i `Transformer` and `VQModel` and ours on the
same seeded random weights (tests/support/llamagen_tiny.py: dim 64, 2 layers, 4 heads, 64 codes, 120 caption tokens of
width
32, a 4x4 grid; the VQ-16 decoder layout at ch 32) and compares, in float32 on the CPU: guided prefill logits and
hidden states, a 6-token forward over the KV cache, decoded pixels, and greedy decodes (CFG 3 and 1) run by the
reference's own `generate`. It also converts the reference modules' state dicts saved as released-layout `.pt`
pickles with `specviz convert` and checks the key layout at the released GPT-XL / VQ-16 shapes (meta device).
The reference numbers go to a small fixture (tensors + the config and seeds as metadata) that
tests/models/test_llamagen.py checks our implementation against: no reference code enters the repository.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specviz.models.convert import check_state, convert_llamagen, gpt_config, vq_config  # noqa: E402
from specviz.models.llamagen import LlamaGenModel, load_llamagen  # noqa: E402
from specviz.models.llamagen_net import GPTConfig, LlamaGenGPT  # noqa: E402
from specviz.models.llamagen_vq import VQDecoder  # noqa: E402
from tests.support.llamagen_tiny import gpt_weights, random_state, tiny_gpt, tiny_vq, vq_weights  # noqa: E402

SEEDS = {"gpt": 0, "vq": 1, "caption": 2, "tokens": 3}
VALID, WINDOW, CFGS = 5, 6, (3.0, 1.0)


def reference(ref_root: Path, gcfg: GPTConfig, vcfg):
    sys.path.insert(0, str(ref_root))
    from autoregressive.models import gpt as rg
    from tokenizer.tokenizer_image import vq_model as rv
    net = rg.Transformer(rg.ModelArgs(dim=gcfg.dim, n_layer=gcfg.n_layer, n_head=gcfg.n_head,
                                      vocab_size=gcfg.vocab_size, cls_token_num=gcfg.cls_token_num,
                                      caption_dim=gcfg.caption_dim, block_size=gcfg.grid ** 2, model_type="t2i")).eval()
    vq = rv.VQModel(rv.ModelArgs(codebook_size=vcfg.codebook_size, codebook_embed_dim=vcfg.embed_dim,
                                 z_channels=vcfg.z_channels, encoder_ch_mult=vcfg.ch_mult,
                                 decoder_ch_mult=vcfg.ch_mult))
    vq.encoder = rv.Encoder(ch=vcfg.ch, ch_mult=vcfg.ch_mult, z_channels=vcfg.z_channels)     # VQModel fixes ch=128
    vq.decoder = rv.Decoder(ch=vcfg.ch, ch_mult=vcfg.ch_mult, z_channels=vcfg.z_channels)
    return rg, rv, net, vq.eval()


def ref_caption(cap, mask):
    """sample_t2i.py's left padding: valid rows moved to the end, mask flipped, padded rows zeroed."""
    n = int(mask.sum())
    emb = torch.cat([cap[n:], cap[:n]])[None]
    m = torch.flip(mask.float(), dims=[-1])[None]
    return emb * m[:, :, None], m


def ref_setup(net, cond, m, s, length):
    """generate()'s setup: caches for 1 or 2 rows, the caption mask folded into the causal mask, diagonal kept."""
    rows = 2 if s > 1 else 1
    net.setup_caches(max_batch_size=rows, max_seq_length=length, dtype=torch.float32)
    net.causal_mask[:, :, :cond.shape[1]] = net.causal_mask[:, :, :cond.shape[1]] * torch.cat([m] * rows).unsqueeze(1)
    eye = torch.eye(net.causal_mask.size(1), net.causal_mask.size(2))
    net.causal_mask[:] = net.causal_mask * (1 - eye) + eye
    return torch.cat([cond, torch.zeros_like(cond) + net.cls_embedding.uncond_embedding]) if rows == 2 else cond


def guided(logits, s):
    if s > 1:
        c, u = torch.split(logits, len(logits) // 2, dim=0)
        return u + (c - u) * s
    return logits


def compare(name, ours, ref, report):
    d = (ours.float() - ref.float()).abs().max().item()
    rel = d / max(ref.float().abs().max().item(), 1e-12)
    report[name] = {"max_abs": d, "rel": rel}
    print(f"{name:28s} max|Δ| {d:.3e}   relative {rel:.3e}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reference", help="a local copy of FoundationVision/LlamaGen")
    ap.add_argument("--out", default=str(ROOT / "tests/fixtures/llamagen_ref.safetensors"))
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_grad_enabled(False)
    gcfg, vcfg = tiny_gpt(), tiny_vq()
    rg, rv, rnet, rvq = reference(Path(args.reference), gcfg, vcfg)
    from autoregressive.models.generate import generate
    gw, vw = gpt_weights(gcfg, SEEDS["gpt"]), vq_weights(vcfg, SEEDS["vq"])
    check_state(rnet, gw, "reference GPT", load=True)                 # identical key layout, loaded strictly
    full_vq = {**random_state({k: v.shape for k, v in rvq.state_dict().items() if k not in vw}, 7), **vw}
    check_state(rvq, full_vq, "reference VQ", load=True)
    ours_gpt = LlamaGenGPT(gcfg)
    ours_gpt.load_state_dict(gw)
    ours_vq = VQDecoder(vcfg)
    ours_vq.load_state_dict(vw)
    ours = LlamaGenModel(ours_gpt, ours_vq, name="pin")
    hid = {}
    rnet.norm.register_forward_hook(lambda m, i, o: hid.__setitem__("h", o))
    g = torch.Generator().manual_seed(SEEDS["caption"])
    cap = torch.randn(gcfg.cls_token_num, gcfg.caption_dim, generator=g)
    mask = torch.arange(gcfg.cls_token_num) < VALID                  # T5 layout: valid rows first
    window = torch.randint(0, gcfg.vocab_size, (WINDOW,), generator=torch.Generator().manual_seed(SEEDS["tokens"]))
    t, n_pos = gcfg.cls_token_num, gcfg.grid ** 2
    cond, m = ref_caption(cap, mask)
    report, fixture = {}, {"caption": cap, "caption_mask": mask.to(torch.uint8), "window_tokens": window}
    for s in CFGS:
        tag = f"cfg{s:g}"
        rows = ref_setup(rnet, cond, m, s, t + n_pos)
        lg, _ = rnet(None, rows, input_pos=torch.arange(t))
        r_pre, r_pre_h = guided(lg[:, -1], s)[0], hid["h"][0, -1]
        x = window[None].expand(len(rows), -1)
        lg, _ = rnet(x, None, input_pos=torch.arange(t, t + WINDOW))
        r_win, r_win_h = guided(lg, s)[0], hid["h"][0]
        pf = ours.prefill((cap, mask), s)
        lw, hw = ours.forward(pf.state, window, torch.arange(WINDOW))
        compare(f"prefill logits {tag}", pf.logits, r_pre, report)
        compare(f"prefill hidden {tag}", pf.hidden, r_pre_h, report)
        compare(f"window logits {tag}", lw, r_win, report)
        compare(f"window hidden {tag}", hw, r_win_h, report)
        greedy = generate(rnet, cond, n_pos, m, cfg_scale=s, temperature=1.0, top_k=0, top_p=1.0,
                          sample_logits=False)[0].long()
        pf = ours.prefill((cap, mask), s)
        mine = [int(pf.logits.argmax())]
        for i in range(n_pos - 1):
            lg_o, _ = ours.forward(pf.state, torch.tensor(mine[-1:]), torch.tensor([i]))
            ours.commit(pf.state, torch.tensor([0]))
            mine.append(int(lg_o[0].argmax()))
        report[f"greedy tokens {tag} equal"] = mine == greedy.tolist()
        print(f"greedy tokens {tag}: reference {greedy.tolist()} ours equal: {mine == greedy.tolist()}")
        fixture.update({f"prefill_logits_{tag}": r_pre, f"prefill_hidden_{tag}": r_pre_h,
                        f"window_logits_{tag}": r_win, f"window_hidden_{tag}": r_win_h, f"greedy_{tag}": greedy})
    codes = fixture["greedy_cfg3"]
    r_px = rvq.decode_code(codes[None], [1, vcfg.embed_dim, gcfg.grid, gcfg.grid])[0]
    compare("pixels (greedy cfg3)", ours.decode_pixels(codes), r_px, report)
    fixture["pixels_cfg3"] = r_px
    with tempfile.TemporaryDirectory() as tmp:                          # released layout -> convert -> load
        tmp = Path(tmp)
        meta = argparse.Namespace(gpt_model="tiny")
        torch.save({"model": rnet.state_dict(), "steps": 1, "args": meta}, tmp / "t2i_tiny_64.pt")
        torch.save({"model": rvq.state_dict(), "steps": 1, "args": meta}, tmp / "vq_tiny.pt")
        out = convert_llamagen(str(tmp / "t2i_tiny_64.pt"), str(tmp / "vq_tiny.pt"), str(tmp / "conv"),
                               image_size=gcfg.grid * vcfg.downsample, n_head=gcfg.n_head)
        conv = load_llamagen(out, device="cpu")
        pf = conv.prefill((cap, mask), 3.0)
        compare("converted prefill logits", pf.logits, fixture["prefill_logits_cfg3"], report)
        compare("converted pixels", conv.decode_pixels(codes), r_px, report)
    linspace = torch.linspace                                           # the reference calls .item() on it
    torch.linspace = lambda *a, **k: linspace(*a, **{**k, "device": "cpu"})
    with torch.device("meta"):                                          # released shapes: GPT-XL t2i, VQ-16
        xl = rg.GPT_XL(block_size=1024, cls_token_num=120, model_type="t2i", caption_dim=2048)
        vq16 = rv.VQ_16(codebook_size=16384, codebook_embed_dim=8)
        xl_sd, vq_sd = xl.state_dict(), vq16.state_dict()
        cfg_xl = gpt_config(xl_sd, "GPT-XL", 512, 16)
        check_state(LlamaGenGPT(cfg_xl), xl_sd, "GPT-XL layout")
        cfg16, kept = vq_config(vq_sd, "VQ-16")
        check_state(VQDecoder(cfg16), kept, "VQ-16 layout")
    torch.linspace = linspace
    n_params = sum(v.numel() for v in xl_sd.values())
    report["released layout"] = {"GPT-XL t2i": cfg_xl.to_dict(), "params": n_params, "VQ-16": cfg16.to_dict(),
                                 "VQ-16 decoder params": sum(v.numel() for v in kept.values())}
    print("released layouts match: GPT-XL t2i", cfg_xl.to_dict(), f"{n_params / 1e6:.1f} M params;",
          "VQ-16", cfg16.to_dict())
    from safetensors.torch import save_file
    meta = {"gpt": gcfg.to_dict(), "vq": vcfg.to_dict(), "seeds": SEEDS, "valid": VALID, "window": WINDOW,
            "cfgs": list(CFGS), "reference": "FoundationVision/LlamaGen", "report": report,
            "torch": torch.__version__}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous().clone() for k, v in fixture.items()}, args.out, metadata={"json": json.dumps(meta)})
    print(f"wrote {args.out} ({Path(args.out).stat().st_size / 1024:.0f} KiB)")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
