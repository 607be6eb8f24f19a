"""`python -m specviz convert llamagen --gpt X.pt --vq Y.pt --out DIR`: the released LlamaGen pickles -> safetensors.

Each pickle is read once with `torch.load(weights_only=True)` (tensors, containers and plain values only; the
training scripts' `argparse.Namespace` under "args" is the one class allowed in addition: it holds settings, not
code). Anything else in the pickle is refused. The state dict is taken from "model" (DDP), "module" (DeepSpeed) or
"state_dict", or the object itself; "module." / "_orig_mod." prefixes are stripped, and so are the reference's KV
cache buffers (`layers.*.attention.kv_cache.*`, present only if a model was saved after sampling). Every key and
shape is checked against our modules before anything is written; the output appears in one rename at the end, so a
failure leaves nothing half-written. Output: config.json (family "llamagen"), gpt.safetensors, vq.safetensors
(decoder, codebook and post_quant_conv only: the encoder is not needed to draw), text_encoder/ when --t5 is a local
directory.
"""
from __future__ import annotations

import argparse
import json
import pickle
import re
import shutil
import tempfile
from pathlib import Path

import torch

from specviz.models.chameleon_vq import DROP as VQGAN_DROP
from specviz.models.chameleon_vq import KEEP as VQGAN_KEEP
from specviz.models.chameleon_vq import check_state as check_vqgan
from specviz.models.chameleon_vq import params_from_yaml
from specviz.models.llamagen_net import FAMILY, GPT_SHAPES, T5_HUB, GPTConfig, LlamaGenGPT
from specviz.models.llamagen_vq import VQConfig, VQDecoder

VQ_DROPPED = ("encoder.", "quant_conv.", "quantize.codebook_used")     # released VQ keys not needed to decode
GPT_DROPPED = r"\.attention\.kv_cache\.[kv]_cache$"     # the reference's inference KV buffers, if ever saved
T5_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "spiece.model")


class CheckpointError(ValueError):
    """A checkpoint is not what it should be; the message says which file and why, on one line."""


def _few(names) -> str:
    names = sorted(names)
    return ", ".join(names[:4]) + (f" (+{len(names) - 4} more)" if len(names) > 4 else "")


def check_state(module: torch.nn.Module, sd: dict, what: str, load: bool = False) -> None:
    """Keys and shapes of sd must equal the module's state dict exactly; then (load=True) load it strictly, taking
    the tensors over (assign: a module built on `meta` gets them without first allocating its own)."""
    want = module.state_dict()
    missing, extra = set(want) - set(sd), set(sd) - set(want)
    if missing:
        raise CheckpointError(f"{what}: {len(missing)} missing keys: {_few(missing)}")
    if extra:
        raise CheckpointError(f"{what}: {len(extra)} unexpected keys: {_few(extra)}")
    bad = [f"{k} {tuple(sd[k].shape)} (expected {tuple(v.shape)})" for k, v in want.items() if sd[k].shape != v.shape]
    if bad:
        raise CheckpointError(f"{what}: wrong shapes: {_few(bad)}")
    if load:
        module.load_state_dict(sd, strict=True, assign=True)


def read_pickle(path, what: str) -> dict:
    """torch.load(weights_only=True) once -> a flat {name: tensor} state dict."""
    p = Path(str(path)).expanduser()
    if not p.is_file():
        raise FileNotFoundError(f"{what} {str(path)!r}: no such file")
    try:
        with torch.serialization.safe_globals([argparse.Namespace]):
            obj = torch.load(p, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, AttributeError, EOFError, ValueError) as e:
        line = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
        raise CheckpointError(f"{what} {p.name}: refused by torch.load(weights_only=True): the pickle carries "
                              f"code or objects other than tensors, or is not a torch checkpoint ({line})") from None
    if isinstance(obj, dict):
        for key in ("model", "module", "state_dict"):
            if isinstance(obj.get(key), dict):
                obj = obj[key]
                break
    if not isinstance(obj, dict) or not obj or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise CheckpointError(f"{what} {p.name}: no state dict of tensors found (looked under 'model', 'module', "
                              "'state_dict' and the top level)")
    return {re.sub(r"^(module\.|_orig_mod\.)+", "", k): v for k, v in obj.items()}


def gpt_config(sd: dict, what: str, image_size: int | None, downsample: int, n_head: int | None = None,
               gpt_model: str | None = None) -> GPTConfig:
    """The GPT's shapes read from its tensors; the head count from --n-head, --gpt-model or the released sizes."""
    if "cls_embedding.embedding_table.weight" in sd:
        raise CheckpointError(f"{what}: a class-conditional (c2i) LlamaGen GPT; only text-to-image (t2i) runs here")
    if "decoder.conv_in.weight" in sd:
        raise CheckpointError(f"{what}: this is a VQ tokenizer checkpoint, not a LlamaGen GPT (swap --gpt and --vq?)")
    need = ("tok_embeddings.weight", "layers.0.attention.wqkv.weight", "cls_embedding.uncond_embedding",
            "cls_embedding.cap_proj.fc1.weight", "layers.0.feed_forward.w1.weight")
    if any(k not in sd for k in need):
        lost = _few(k for k in need if k not in sd)
        raise CheckpointError(f"{what}: not a LlamaGen text-to-image GPT (missing {lost})")
    vocab, dim = sd["tok_embeddings.weight"].shape
    n_layer = 1 + max(int(m.group(1)) for k in sd if (m := re.match(r"layers\.(\d+)\.", k)))
    if gpt_model:
        if gpt_model not in GPT_SHAPES:
            raise CheckpointError(f"--gpt-model must be one of {', '.join(GPT_SHAPES)}; got {gpt_model!r}")
        if GPT_SHAPES[gpt_model][::2] != (n_layer, dim):
            raise CheckpointError(f"{what}: has {n_layer} layers of width {dim}, not the (layers, heads, width) "
                                  f"{GPT_SHAPES[gpt_model]} of {gpt_model}")
        n_head = n_head or GPT_SHAPES[gpt_model][1]
    if n_head is None:
        known = [h for (n, h, d) in GPT_SHAPES.values() if (n, d) == (n_layer, dim)]
        if not known:
            raise CheckpointError(f"{what}: {n_layer} layers of width {dim} is not a released LlamaGen size; "
                                  "pass --n-head")
        n_head = known[0]
    if dim % n_head:
        raise CheckpointError(f"{what}: width {dim} is not divisible by {n_head} heads")
    hd = dim // n_head
    qkv = sd["layers.0.attention.wqkv.weight"].shape[0]
    if (qkv - dim) % (2 * hd):
        raise CheckpointError(f"{what}: wqkv has {qkv} rows, not width {dim} + 2 x (kv heads x {hd})")
    kv = (qkv - dim) // (2 * hd)
    if image_size is None:
        raise CheckpointError(f"{what}: pass --image-size (256 or 512 for the released text-to-image GPTs)")
    if image_size % downsample:
        raise CheckpointError(f"--image-size {image_size} is not a multiple of the VQ's {downsample}x downsampling")
    tokens, cap_dim = sd["cls_embedding.uncond_embedding"].shape
    return GPTConfig(dim=dim, n_layer=n_layer, n_head=n_head, n_kv_head=None if kv == n_head else kv,
                     ffn_hidden=sd["layers.0.feed_forward.w1.weight"].shape[0], vocab_size=vocab,
                     cls_token_num=tokens, caption_dim=cap_dim, grid=image_size // downsample)


def vq_config(sd: dict, what: str) -> tuple[VQConfig, dict]:
    """The decoder's shapes read from its tensors -> (config, the decoder's state dict without dropped keys)."""
    if "tok_embeddings.weight" in sd:
        raise CheckpointError(f"{what}: this is a LlamaGen GPT, not the VQ tokenizer (swap --gpt and --vq?)")
    need = ("quantize.embedding.weight", "post_quant_conv.weight", "decoder.conv_out.weight")
    if any(k not in sd for k in need):
        raise CheckpointError(f"{what}: not a LlamaGen VQ checkpoint (missing {_few(k for k in need if k not in sd)})")
    keep = {k: v for k, v in sd.items() if not k.startswith(VQ_DROPPED)}
    levels = 1 + max(int(m.group(1)) for k in keep if (m := re.match(r"decoder\.conv_blocks\.(\d+)\.", k)))
    res = 1 + max(int(m.group(1)) for k in keep if (m := re.match(r"decoder\.conv_blocks\.0\.res\.(\d+)\.", k)))
    ch = keep["decoder.conv_out.weight"].shape[1]
    outs = [keep[f"decoder.conv_blocks.{i}.res.0.conv1.weight"].shape[0] for i in range(levels)]
    codes, edim = keep["quantize.embedding.weight"].shape
    cfg = VQConfig(codebook_size=codes, embed_dim=edim, z_channels=keep["post_quant_conv.weight"].shape[0], ch=ch,
                   ch_mult=[o // ch for o in reversed(outs)], num_res_blocks=res - 1)
    return cfg, keep


def _t5(t5: str, cap_dim: int, tmp: Path) -> str:
    """A local T5 directory is copied into text_encoder/ (safetensors only); a hub id is only recorded."""
    src = Path(t5).expanduser()
    if not src.is_dir():
        return t5
    files = [src / f for f in T5_FILES if (src / f).is_file()] + sorted(src.glob("*.safetensors*"))
    if not any(f.suffix == ".safetensors" for f in files) or not (src / "config.json").is_file():
        raise CheckpointError(f"--t5 {t5}: needs config.json and *.safetensors (a T5 encoder saved with safetensors)")
    d = json.loads((src / "config.json").read_text()).get("d_model")
    if d != cap_dim:
        raise CheckpointError(f"--t5 {t5}: its width d_model={d} does not match the GPT's caption width {cap_dim}")
    (tmp / "text_encoder").mkdir()
    for f in files:
        shutil.copy2(f, tmp / "text_encoder" / f.name)
    return "text_encoder"


def convert_llamagen(gpt: str, vq: str, out: str, image_size: int | None = None, n_head: int | None = None,
                     gpt_model: str | None = None, t5: str = T5_HUB, dtype: str | None = None) -> Path:
    # on demand: only when converting
    from safetensors.torch import save_file
    dest = Path(out).expanduser()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise CheckpointError(f"--out {out} already exists and is not empty; choose a new directory")
    if image_size is None and (m := re.search(r"(256|384|512)", Path(gpt).name)):
        image_size = int(m.group(1))
    vq_sd = read_pickle(vq, "--vq")
    vcfg, vq_sd = vq_config(vq_sd, f"--vq {Path(vq).name}")
    check_state(VQDecoder(vcfg), vq_sd, f"--vq {Path(vq).name}")
    gpt_sd = {k: v for k, v in read_pickle(gpt, "--gpt").items() if not re.search(GPT_DROPPED, k)}
    gcfg = gpt_config(gpt_sd, f"--gpt {Path(gpt).name}", image_size, vcfg.downsample, n_head, gpt_model)
    with torch.device("meta"):
        check_state(LlamaGenGPT(gcfg), gpt_sd, f"--gpt {Path(gpt).name}")
    if gcfg.vocab_size != vcfg.codebook_size:
        raise CheckpointError(f"--gpt predicts {gcfg.vocab_size} codes but the --vq codebook has {vcfg.codebook_size}")
    cast = getattr(torch, dtype) if dtype else None
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.part-", dir=dest.parent))
    try:
        enc = _t5(t5, gcfg.caption_dim, tmp)
        save_file({k: (v.to(cast) if cast else v).contiguous() for k, v in gpt_sd.items()}, tmp / "gpt.safetensors")
        save_file({k: v.float().contiguous() for k, v in vq_sd.items()}, tmp / "vq.safetensors")
        conf = {"family": FAMILY, "format": 1, "gpt": gcfg.to_dict(), "vq": vcfg.to_dict(), "text_encoder": enc,
                "image_size": gcfg.grid * vcfg.downsample, "source": {"gpt": Path(gpt).name, "vq": Path(vq).name}}
        (tmp / "config.json").write_text(json.dumps(conf, indent=1) + "\n")
        if dest.exists():
            dest.rmdir()
        tmp.rename(dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def convert_vqgan(ckpt, yaml_path, out_dir) -> Path:
    """Meta's vqgan.ckpt + vqgan.yaml -> out_dir/vqgan.safetensors + out_dir/vqgan.json (decoder weights only).
    The pickle is read once through read_pickle (weights_only=True); nothing is written unless every check passes."""
    from safetensors.torch import save_file  # as convert_llamagen: only a conversion writes safetensors
    params = params_from_yaml(yaml_path)
    sd = read_pickle(ckpt, "VQGAN")
    unknown = sorted(k for k in sd if not k.startswith(VQGAN_KEEP + VQGAN_DROP))
    if unknown:
        raise CheckpointError(f"{ckpt}: {len(unknown)} unexpected VQGAN weight(s), e.g. {unknown[0]!r}")
    keep = {k: v.detach().float().contiguous() for k, v in sd.items() if k.startswith(VQGAN_KEEP)}
    check_vqgan(keep, params, str(ckpt))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "vqgan.safetensors.partial"
    save_file(keep, str(tmp))
    (out / "vqgan.json").write_text(json.dumps(params, indent=1))
    tmp.replace(out / "vqgan.safetensors")
    return out / "vqgan.safetensors"


def add_parser(sub) -> None:
    """`convert llamagen ...` under the CLI's subcommands."""
    cv = sub.add_parser("convert", help="released checkpoints (pickles) -> a safetensors directory for --model")
    fam = cv.add_subparsers(dest="family", required=True, parser_class=type(cv))
    lg = fam.add_parser("llamagen", help="LlamaGen t2i: --gpt t2i_XL_stage1_256.pt --vq vq_ds16_t2i.pt --out DIR")
    lg.add_argument("--gpt", required=True, help="the GPT .pt (e.g. t2i_XL_stage1_256.pt)")
    lg.add_argument("--vq", required=True, help="the VQ tokenizer .pt (vq_ds16_t2i.pt)")
    lg.add_argument("--out", required=True, help="a new directory to write")
    lg.add_argument("--image-size", type=int, default=None, help="256 or 512 (default: read from the file name)")
    lg.add_argument("--gpt-model", default=None, choices=list(GPT_SHAPES), help="default: from the shapes")
    lg.add_argument("--n-head", type=int, default=None, help="attention heads (other than the released sizes)")
    lg.add_argument("--t5", default=T5_HUB, help="text encoder: a hub id (recorded) or a local directory (copied)")
    lg.add_argument("--dtype", default=None, choices=["float32", "bfloat16", "float16"],
                    help="store the GPT in this dtype (default: as in the pickle)")
    lv = fam.add_parser("lumina-vqgan", help="Chameleon VQGAN of a Lumina-mGPT release: --ckpt vqgan.ckpt --yaml "
                        "vqgan.yaml --out DIR (the model's directory)")
    lv.add_argument("--ckpt", required=True, help="Meta's vqgan.ckpt")
    lv.add_argument("--yaml", required=True, help="its vqgan.yaml")
    lv.add_argument("--out", required=True, help="the Lumina-mGPT directory (config.json + *.safetensors)")


def main(args) -> int:
    if args.family == "lumina-vqgan":
        print(json.dumps({"out": str(convert_vqgan(args.ckpt, args.yaml, args.out)), "family": "lumina-vqgan"}))
        return 0
    dest = convert_llamagen(args.gpt, args.vq, args.out, args.image_size, args.n_head, args.gpt_model, args.t5,
                            args.dtype)
    print(json.dumps({"out": str(dest), "family": FAMILY, **json.loads((dest / "config.json").read_text())["gpt"]}))
    return 0
