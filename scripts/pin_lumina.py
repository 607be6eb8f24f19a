"""Pin specviz's Lumina-mGPT backend to the reference implementation on the same random weights.

    git clone https://github.com/Alpha-VLLM/Lumina-mGPT /tmp/lumina_ref          # any local copy
    pip install --target /tmp/tf4 --no-deps transformers==4.44.2 "tokenizers==0.19.1" huggingface_hub==0.24.6
    python scripts/pin_lumina.py --ref /tmp/lumina_ref --ref-site /tmp/tf4

The reference needs transformers 4.4x (its `model/chameleon` copy imports 4.x internals), so it runs in a child
process with `--ref-site` first on sys.path; this process runs ours on transformers 5.x. Both read the very same
files: tests/support/lumina_tiny.py writes a tiny checkpoint in the released layout (config.json as Lumina writes it,
model.safetensors with per-shard qk-norm rows, vqgan.ckpt + vqgan.yaml), which the reference loads with the class
its FlexARInferenceSolver loads (`model.chameleon.ChameleonForConditionalGeneration`, Lumina's copy of the 4.4x
Chameleon modeling) and its own `chameleon_vae_ori.ImageTokenizer`, and ours
with `specviz.models.lumina_load.load_lumina` (VQGAN converted by our converter).

Compared (fp32): the guided prefill law of image position 0 (reference: its CFG logits processor
`LLMImageStartTriggeredUnbatchedClassifierFreeGuidanceLogitsProcessor` on the cond scores, uncond context = the
image header alone), two multi-token forwards over the KV cache that cross row ends (EOL tokens inserted), the
final-norm hidden states, and decoded pixels (float decoder output and the uint8 image of the reference's
`FlexARItemProcessor.decode_image` arithmetic). Greedy tokens come from the reference's own `generate` with its CFG
processor and `MultiModalLogitsProcessor` (EOL / end-of-image forcing, non-image suppression). Also checked: the
reference's own `save_pretrained` output (which keeps model.vqmodel.*) loads in ours with identical logits.
Writes tests/fixtures/lumina_ref.json (config, ids, greedy tokens) + tests/fixtures/lumina_ref.safetensors.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
SEED, CFG, PROMPT = 0, 3.0, "a red house"
CHUNKS = [(0, 8), (8, 14)]                     # image positions fed in two forwards (each crosses a row end)
COLS = 512                                      # logit columns kept in the fixture for the chunk rows


# -- reference side (child process: transformers 4.44 + the reference repository) --------------------------------------
def _child(job_path: str) -> None:
    import types
    job = json.loads(Path(job_path).read_text())
    import transformers  # noqa: F401  (before the stub below: its import-time probe must not see it)
    sys.modules.setdefault("sentencepiece", types.SimpleNamespace(SentencePieceProcessor=object))   # unused here
    real_tensor, real_arange = torch.tensor, torch.arange

    def cpu(fn):
        return lambda *a, **k: fn(*a, **{**k, "device": "cpu"} if k.get("device") == "cuda" else k)
    torch.tensor, torch.arange = cpu(real_tensor), cpu(real_arange)     # the processors hard-code device="cuda"
    torch.Tensor.cuda = lambda self, *a, **k: self
    import inference_solver as ref
    from data.item_processor import FlexARItemProcessor
    from model.chameleon import ChameleonForConditionalGeneration  # what FlexARInferenceSolver loads
    from model.chameleon_vae_ori import ImageTokenizer, VocabInfo, VocabTranslation
    from transformers import DynamicCache, GenerationConfig, LogitsProcessorList
    torch.set_grad_enabled(False)
    d = Path(job["dir"])
    net = ChameleonForConditionalGeneration.from_pretrained(str(d), torch_dtype=torch.float32).eval()
    vocab = json.loads((d / "config.json").read_text())["vocabulary_map"]
    tr = VocabTranslation(VocabInfo(vocab))
    img = torch.tensor(sorted(tr.bpe2img, key=tr.bpe2img.get))          # BPE id of each code, code order
    ids = job["ids"]
    cond, head = job["prompt"] + job["header"], job["header"]
    out = {"layout": {k: list(v.shape) for k, v in net.state_dict().items() if not k.startswith("model.vqmodel.")}}

    # prefill: the reference CFG processor on the cond scores (it runs the uncond context itself)
    x = torch.tensor([cond])
    hc = net.model(x).last_hidden_state
    cfgp = ref.LLMImageStartTriggeredUnbatchedClassifierFreeGuidanceLogitsProcessor(
        CFG, net, ids["boi"], ids["eoi"], ids["eol"], 32)
    guided = cfgp(x, net.lm_head(hc[:, -1]).float())[0]
    out["prefill_logits"], out["prefill_hidden"] = guided[img], hc[0, -1]

    # multi-token forwards over KV caches (cond and uncond contexts, as the processor keeps them)
    caches, seqs = [DynamicCache(), DynamicCache()], [cond, head]
    for r, s in enumerate(seqs):
        net.model(torch.tensor([s]), past_key_values=caches[r], use_cache=True)
    rows_l, rows_h = [], []
    for a, b in CHUNKS:
        chunk = job["expanded"][f"{a}-{b}"]                               # BPE ids with EOLs, and the rows to read
        hs = [net.model(torch.tensor([chunk["ids"]]), past_key_values=caches[r], use_cache=True,
                        position_ids=torch.arange(len(seqs[r]), len(seqs[r]) + len(chunk["ids"]))[None],
                        attention_mask=torch.ones(1, len(seqs[r]) + len(chunk["ids"]), dtype=torch.long)
                        ).last_hidden_state[0] for r in range(2)]
        seqs = [s + chunk["ids"] for s in seqs]
        c, u = (net.lm_head(h).float() for h in hs)
        g = CFG * (c - u) + u
        rows_l.append(g[chunk["rows"]][:, img]), rows_h.append(hs[0][chunk["rows"]])
    out["chunk_logits"], out["chunk_hidden"] = torch.cat(rows_l), torch.cat(rows_h)

    # greedy generation with the reference's processors (CFG, then image-layout constraints)
    h, w = job["grid"]
    procs = LogitsProcessorList([
        ref.LLMImageStartTriggeredUnbatchedClassifierFreeGuidanceLogitsProcessor(CFG, net, ids["boi"], ids["eoi"],
                                                                                ids["eol"], 32),
        ref.MultiModalLogitsProcessor(ids["boi"], ids["eoi"], ids["eol"], 32, net.config.vocab_size)])
    gc = GenerationConfig(max_new_tokens=h * (w + 1) + 1, do_sample=False, eos_token_id=[ids["eoi"]],
                          pad_token_id=ids["eoi"])
    x = torch.tensor([cond])                         # explicit all-ones mask: the prompt may hold any id
    seq = net.generate(x, gc, attention_mask=torch.ones_like(x), logits_processor=procs)[0, len(cond):].tolist()
    out["greedy_sequence"] = torch.tensor(seq)

    # pixels: Meta's VQModel through the reference ImageTokenizer, and FlexARItemProcessor.decode_image's arithmetic
    tok = ImageTokenizer(cfg_path=job["vq_yaml"], ckpt_path=job["vq_ckpt"], device="cpu")
    sd = torch.load(job["vq_ckpt"], weights_only=True)["state_dict"]
    miss = tok._vq_model.load_state_dict(sd, strict=False).missing_keys
    out["vq_missing_decoder_keys"] = [k for k in miss if k.startswith(("decoder.", "post_quant", "quantize."))]
    codes = torch.tensor(job["codes"])
    emb = tok._vq_model.quantize.embedding.weight.shape[-1]
    q = tok._vq_model.quantize.get_codebook_entry(codes, (1, h, w, emb))
    out["pixels"] = tok._vq_model.decode(q)[0]
    proc = types.SimpleNamespace(token2id=lambda s: vocab[s], image_start_token="<racm3:break>",
                                 image_end_token="<eoss>", chameleon_ori_translation=tr,
                                 chameleon_ori_image_tokenizer=tok, patch_size=32)
    pil = FlexARItemProcessor.decode_image(proc, [ids["boi"]] + head[1:] + seq)
    import numpy as np
    out["image"] = torch.from_numpy(np.array(pil))
    from safetensors.torch import save_file
    layout = out.pop("layout")
    missing = out.pop("vq_missing_decoder_keys")
    seq_t = out.pop("greedy_sequence")
    save_file({k: v.contiguous().float() for k, v in out.items()}, job["out"])
    Path(job["out"] + ".json").write_text(json.dumps({"layout": layout, "vq_missing": missing,
                                                      "greedy_sequence": seq_t.tolist()}))
    net.save_pretrained(job["saved"], safe_serialization=True)


# -- our side --------------------------------------------------------------------------------------------------------
def _ours(model, codes):
    pf = model.prefill(PROMPT, CFG)
    st = pf.state
    rows_l, rows_h = [], []
    for a, b in CHUNKS:
        lg, hd = model.forward(st, torch.tensor(codes[a:b]), torch.arange(a, b))
        model.commit(st, torch.arange(b - a))
        rows_l.append(lg), rows_h.append(hd)
    return {"prefill_logits": pf.logits, "prefill_hidden": pf.hidden, "chunk_logits": torch.cat(rows_l),
            "chunk_hidden": torch.cat(rows_h)}


def _expanded(model, codes, a, b):
    """The reference's token chunk for image positions a..b-1: BPE ids with an EOL after each row end, and the
    row whose output is the law of the next image position (the EOL's row at a row end)."""
    h, w = model.grid
    ids, rows = [], []
    for p in range(a, b):
        ids.append(int(model.img_bpe[codes[p]]))
        if p % w == w - 1 and p < h * w - 1:
            ids.append(model.ids["eol"])
        rows.append(len(ids) - 1)
    return {"ids": ids, "rows": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", required=True, help="local copy of Alpha-VLLM/Lumina-mGPT")
    ap.add_argument("--ref-site", required=True, help="site dir with transformers 4.44 (see above)")
    ap.add_argument("--out", default=str(ROOT / "tests" / "fixtures" / "lumina_ref"))
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child)
        return 0
    sys.path.insert(0, str(ROOT))
    from safetensors.torch import load_file, save_file

    from specviz.models.lumina_load import load_lumina
    from tests.support.lumina_tiny import HW, TINY, VQ, chameleon_config, make_tiny_lumina, released_shapes
    torch.manual_seed(0)
    tmp = Path(tempfile.mkdtemp(prefix="pin_lumina_"))
    ck = make_tiny_lumina(tmp / "tiny", seed=SEED)
    ours = load_lumina(str(ck), "cpu")
    h, w = ours.grid
    g = torch.Generator().manual_seed(7)
    probe = torch.randint(0, ours.codebook_size, (h * w,), generator=g).tolist()     # codes for the chunks/pixels
    job = {"dir": str(ck), "prompt": ours.encode_prompt(PROMPT), "header": ours.header(), "ids": ours.ids,
           "grid": [h, w], "vq_yaml": str(ck / "chameleon_tokenizer" / "vqgan.yaml"),
           "vq_ckpt": str(ck / "chameleon_tokenizer" / "vqgan.ckpt"), "codes": probe,
           "expanded": {f"{a}-{b}": _expanded(ours, probe, a, b) for a, b in CHUNKS},
           "out": str(tmp / "ref.safetensors"), "saved": str(tmp / "saved")}
    (tmp / "job.json").write_text(json.dumps(job))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([args.ref_site, str(Path(args.ref) / "lumina_mgpt"),
                                                       str(args.ref)]))
    r = subprocess.run([sys.executable, __file__, "--ref", args.ref, "--ref-site", args.ref_site,
                        "--child", str(tmp / "job.json")], cwd=str(Path(args.ref) / "lumina_mgpt"), env=env,
                       capture_output=True, text=True)
    if r.returncode:
        sys.stderr.write(r.stdout[-3000:] + r.stderr[-6000:])
        return 1
    ref = load_file(job["out"])
    meta = json.loads(Path(job["out"] + ".json").read_text())
    want = {k: list(v) for k, v in released_shapes(chameleon_config(SEED)).items()}
    assert meta["layout"] == want, "the reference's state_dict layout differs from tests/support/lumina_tiny.py's"
    assert not meta["vq_missing"], f"reference VQModel lacks {meta['vq_missing'][:3]}"
    seq = meta["greedy_sequence"]
    bpe2code = {int(b): c for c, b in enumerate(ours.img_bpe.tolist())}
    grid_rows = [seq[r * (w + 1):(r + 1) * (w + 1)] for r in range(h)]
    assert all(row[-1] == ours.ids["eol"] for row in grid_rows) and seq[-1] == ours.ids["eoi"], seq
    greedy = [bpe2code[t] for row in grid_rows for t in row[:-1]]

    mine = _ours(ours, probe)
    mine["pixels"] = ours.decode_pixels(torch.tensor(probe))
    deltas = {}
    for k, v in mine.items():
        d = (v.float() - ref[k]).abs().max().item()
        deltas[k] = {"max_abs": d, "ref_max_abs": ref[k].abs().max().item(),
                     "rel": d / max(ref[k].abs().max().item(), 1e-12)}
    img = torch.from_numpy(__import__("numpy").array(ours.decode_image(torch.tensor(greedy))))
    deltas["image_uint8"] = {"max_abs": (img.int() - ref["image"].int()).abs().max().item()}
    # greedy through our boundary (AR, argmax of the guided law)
    pf = ours.prefill(PROMPT, CFG)
    st, law, got = pf.state, pf.logits, []
    for p in range(h * w):
        got.append(int(law.argmax()))
        if p + 1 < h * w:
            law = ours.forward(st, torch.tensor([got[-1]]), torch.tensor([p]))[0][0]
            ours.commit(st, torch.tensor([0]))
    # the reference's own save_pretrained output (keeps model.vqmodel.*) loads in ours with identical logits
    saved = Path(job["saved"])
    for f in ("specviz.json", "vqgan.safetensors", "vqgan.json", "tokenizer.json", "tokenizer_config.json",
              "special_tokens_map.json"):
        if (ck / f).exists():
            shutil.copy(ck / f, saved / f)
    again = load_lumina(str(saved), "cpu").prefill(PROMPT, CFG).logits
    deltas["reference_saved_checkpoint_prefill"] = {"max_abs": (again - mine["prefill_logits"]).abs().max().item()}
    report = {"deltas": deltas, "greedy_ref": greedy, "greedy_ours": got, "greedy_equal": got == greedy}
    print(json.dumps(report, indent=1))

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    cols = torch.randperm(ours.codebook_size, generator=torch.Generator().manual_seed(11))[:COLS].sort().values
    keep = {"prefill_logits": ref["prefill_logits"], "prefill_hidden": ref["prefill_hidden"],
            "chunk_logits_cols": ref["chunk_logits"][:, cols], "chunk_logits_argmax": ref["chunk_logits"].argmax(1),
            "chunk_logits_lse": ref["chunk_logits"].logsumexp(1), "chunk_hidden": ref["chunk_hidden"],
            "pixels": ref["pixels"], "image": ref["image"].to(torch.uint8), "cols": cols}
    save_file({k: v.contiguous() for k, v in keep.items()}, str(out) + ".safetensors")
    (Path(str(out) + ".json")).write_text(json.dumps({
        "what": "reference numbers from scripts/pin_lumina.py (Alpha-VLLM/Lumina-mGPT on transformers 4.44.2)",
        "seed": SEED, "cfg": CFG, "prompt": PROMPT, "prompt_ids": job["prompt"], "header": job["header"],
        "config": TINY, "pixels_hw": HW, "vq": VQ, "chunks": CHUNKS, "probe_codes": probe,
        "greedy_codes": greedy, "greedy_sequence": seq, "deltas": deltas}, indent=1))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if got == greedy else 1


if __name__ == "__main__":
    sys.exit(main())
