"""A tiny random Lumina-mGPT checkpoint written exactly in the released layout (docs/gpu.md, Lumina-mGPT): config.json
as Lumina's ChameleonXLLMXConfig.save_pretrained writes it, model.safetensors with the per-shard qk-norm rows
(model_parallel_size, head_dim), a tokenizer, and Meta's VQGAN as a `vqgan.ckpt` pickle + `vqgan.yaml` (converted
to safetensors by `make_tiny_lumina(convert=True)`). Shared by tests/models/test_lumina.py and scripts/pin_lumina.py
(which
loads the very same files into the reference implementation).

The vocabulary follows Chameleon's ids, which the reference hard-codes: image tokens are BPE ids 4..8195 (their
IMGIMG names carry a shuffled code order, so the BPE <-> code mapping is exercised), <eoss> 8196, <racm3:break> 8197,
<reservedNNNNN> = id NNNNN + 4 (the separator 08706 = 8710, the EOL 08799 = 8803, resolution tokens 08800 + n =
8804 + n), then a few text words. Weights are drawn from a seeded generator in sorted key order (deterministic).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import torch

CODES = 8192
WORDS = ["Generate", "an", "image", "of", "according", "to", "the", "following", "prompt:", "a", "red", "house",
         "blue", "sky", "tree", "green"]
TINY = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, model_parallel_size=1, max_position_embeddings=256)
HW = (64, 96)                                   # pixels at 32 px / grid -> 2 x 3 grids -> a 4 x 6 code raster
VQ = {"embed_dim": 8, "n_embed": CODES,
      "ddconfig": {"double_z": False, "z_channels": 32, "resolution": 8, "in_channels": 3, "out_ch": 3, "ch": 32,
                   "ch_mult": [1, 2], "num_res_blocks": 1, "attn_resolutions": [4], "dropout": 0.0}}


def _digits(n: int) -> str:
    return "".join(chr(ord("A") + int(d)) for d in str(n))


def vocabulary(seed: int = 0) -> dict:
    g = torch.Generator().manual_seed(1000)                    # one tokenizer for the whole family
    perm = torch.randperm(CODES, generator=g).tolist()
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<pad>": 3}
    vocab.update({f"IMGIMG{_digits(perm[i])}Z": 4 + i for i in range(CODES)})
    vocab.update({"<eoss>": 8196, "<racm3:break>": 8197})
    vocab.update({f"<reserved{i - 4:05d}>": i for i in range(8198, 8900)})
    vocab.update({w: 8900 + i for i, w in enumerate(WORDS)})
    return vocab


def chameleon_config(seed: int = 0) -> dict:
    vocab = vocabulary(seed)
    return dict(architectures=["ChameleonXLLMXForConditionalGeneration"], model_type="chameleon",
                vocab_size=len(vocab), hidden_act="silu", initializer_range=0.02, rms_norm_eps=1e-5, use_cache=True,
                pad_token_id=None, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False, rope_theta=10000.0,
                rope_scaling=None, attention_bias=False, attention_dropout=0.0, swin_norm=False, mlp_bias=False,
                mask_image_logits=False, dropout=0.0, z_loss_weight=0.0, torch_dtype="float32",
                vocabulary_map=vocab, vq_config=dict(embed_dim=256, num_embeddings=CODES), **TINY)


def released_shapes(cfg: dict) -> dict:
    d, i, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    hd = d // cfg["num_attention_heads"]
    kv, mp = cfg["num_key_value_heads"] * hd, cfg["model_parallel_size"]
    s = {"model.embed_tokens.weight": (v, d), "model.norm.weight": (d,), "lm_head.weight": (v, d)}
    for n in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{n}."
        s.update({p + "self_attn.q_proj.weight": (d, d), p + "self_attn.k_proj.weight": (kv, d),
                  p + "self_attn.v_proj.weight": (kv, d), p + "self_attn.o_proj.weight": (d, d),
                  p + "mlp.gate_proj.weight": (i, d), p + "mlp.up_proj.weight": (i, d),
                  p + "mlp.down_proj.weight": (d, i), p + "input_layernorm.weight": (d,),
                  p + "post_attention_layernorm.weight": (d,)})
        for nm in ("q_norm", "k_norm"):
            s[p + f"self_attn.{nm}.weight"] = s[p + f"self_attn.{nm}.bias"] = (mp, hd)
    return s


def _draw(shapes: dict, g: torch.Generator, peak: float) -> dict:
    out = {}
    for k in sorted(shapes):
        shape = shapes[k]
        x = torch.randn(shape, generator=g)
        if k.endswith("norm.weight") or ("norm" in k and k.endswith(".weight") and len(shape) == 1):
            x = 1 + 0.1 * x                                       # norm gains near 1
        elif k.endswith(".bias"):
            x = 0.1 * x
        elif k == "lm_head.weight":
            x = x * peak / math.sqrt(shape[1])
        elif len(shape) >= 2 and "embed" not in k:
            x = x / math.sqrt(math.prod(shape[1:]))               # 1 / sqrt(fan_in)
        out[k] = x.contiguous()
    return out


def vq_state(seed: int = 0) -> dict:
    """Decoder + quantizer weights, plus encoder / quant_conv / loss entries as Meta's pickle carries them."""
    from specviz.models.chameleon_vq import _shapes
    shapes = dict(_shapes(VQ))
    dd = VQ["ddconfig"]
    shapes.update({"encoder.conv_in.weight": (dd["ch"], 3, 3, 3), "encoder.conv_in.bias": (dd["ch"],),
                   "quant_conv.weight": (VQ["embed_dim"], dd["z_channels"], 1, 1),
                   "quant_conv.bias": (VQ["embed_dim"],), "loss.logvar": (1,)})
    return _draw(shapes, torch.Generator().manual_seed(2000 + seed), 1.0)


def write_vqgan(folder: Path, seed: int = 0) -> tuple[Path, Path]:
    import yaml
    folder.mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": vq_state(seed)}, folder / "vqgan.ckpt")
    params = {"embed_dim": VQ["embed_dim"], "n_embed": VQ["n_embed"], "ddconfig": VQ["ddconfig"],
              "lossconfig": {"target": "taming.modules.losses.vqperceptual.VQLPIPSWithDiscriminator"}}
    (folder / "vqgan.yaml").write_text(yaml.safe_dump({"model": {"target": "taming.models.vqgan.VQModel",
                                                                 "params": params}}))
    return folder / "vqgan.ckpt", folder / "vqgan.yaml"


def write_tokenizer(folder: Path, vocab: dict) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    wl = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    wl.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=wl, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                  pad_token="<pad>", additional_special_tokens=["<reserved08706>"])
    tok.save_pretrained(str(folder))


def make_tiny_lumina(folder, seed: int = 0, peak: float = 6.0, convert: bool = True, tokenizer: bool = True) -> Path:
    """Write the released layout into `folder`; with convert, also the VQGAN's safetensors (our converter)."""
    from safetensors.torch import save_file
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cfg = chameleon_config(seed)
    (folder / "config.json").write_text(json.dumps(cfg, indent=1))
    sd = _draw(released_shapes(cfg), torch.Generator().manual_seed(seed), peak)
    save_file(sd, str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "specviz.json").write_text(json.dumps({"height": HW[0], "width": HW[1]}))
    ckpt, yml = write_vqgan(folder / "chameleon_tokenizer", seed)
    if tokenizer:
        write_tokenizer(folder, cfg["vocabulary_map"])
    if convert:
        from specviz.models.convert import convert_vqgan
        convert_vqgan(ckpt, yml, folder)
    return folder
