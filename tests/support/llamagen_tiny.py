"""Tiny random LlamaGen checkpoints in the released layout (shared by tests/models/test_llamagen.py and
scripts/pin_llamagen.py): seeded weights for a key -> shape map, the `.pt` pickles as LlamaGen's training scripts
save them ({"model": state dict, "steps": ..., "args": Namespace}), and a tiny T5 encoder + tokenizer (safetensors).
"""
from __future__ import annotations

import argparse

import torch

from specviz.models.llamagen_net import GPTConfig, LlamaGenGPT, ffn_hidden
from specviz.models.llamagen_vq import VQConfig, VQDecoder

PEAK = 4.0           # output-head scale: random laws far from uniform (and argmax far from ties)


def tiny_gpt(grid: int = 4, dim: int = 64, n_layer: int = 2, n_head: int = 4, vocab: int = 64, tokens: int = 120,
             caption_dim: int = 32) -> GPTConfig:
    return GPTConfig(dim=dim, n_layer=n_layer, n_head=n_head, ffn_hidden=ffn_hidden(dim), vocab_size=vocab,
                     cls_token_num=tokens, caption_dim=caption_dim, grid=grid)


def tiny_vq(vocab: int = 64, ch_mult=(1, 1, 2, 2, 4)) -> VQConfig:
    return VQConfig(codebook_size=vocab, embed_dim=8, z_channels=32, ch=32, ch_mult=list(ch_mult))


def random_state(shapes: dict, seed: int) -> dict:
    """{name: shape} -> seeded float32 weights: norms ~ 1 + 0.1 N, biases ~ 0.1 N, matrices ~ N / sqrt(fan_in),
    embeddings ~ N, the GPT output head ~ PEAK N / sqrt(dim). Drawn in sorted key order from one generator."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name in sorted(shapes):
        shape = tuple(shapes[name])
        x = torch.randn(shape, generator=g)
        if name == "quantize.codebook_used":
            x = torch.zeros(shape)
        elif len(shape) == 1:
            x = 1 + 0.1 * x if "norm" in name else 0.1 * x
        elif name in ("tok_embeddings.weight", "quantize.embedding.weight"):
            pass
        elif name == "output.weight":
            x = x * PEAK / shape[1] ** 0.5
        else:
            x = x / (x[0].numel()) ** 0.5
        out[name] = x
    return out


def shapes_of(module: torch.nn.Module) -> dict:
    return {k: tuple(v.shape) for k, v in module.state_dict().items()}


def gpt_weights(cfg: GPTConfig, seed: int) -> dict:
    with torch.device("meta"):
        shapes = shapes_of(LlamaGenGPT(cfg))
    return random_state(shapes, seed)


def vq_weights(cfg: VQConfig, seed: int) -> dict:
    with torch.device("meta"):
        shapes = shapes_of(VQDecoder(cfg))
    return random_state(shapes, seed)


def save_release(sd: dict, path, **extra) -> None:
    """A `.pt` the way LlamaGen's train scripts write it (the released files keep the "model" key)."""
    torch.save({"model": sd, "steps": 0, "args": argparse.Namespace(gpt_model="tiny", **extra)}, path)


def vq_release_extras(cfg: VQConfig, seed: int) -> dict:
    """Stand-ins for the released VQ keys the converter drops (encoder, quant_conv, codebook usage counter)."""
    return random_state({"encoder.conv_in.weight": (cfg.ch, 3, 3, 3), "encoder.conv_in.bias": (cfg.ch,),
                         "quant_conv.weight": (cfg.embed_dim, cfg.z_channels, 1, 1),
                         "quant_conv.bias": (cfg.embed_dim,),
                         "quantize.codebook_used": (65536,)}, seed + 1000)


WORDS = ["<pad>", "</s>", "<unk>", "a", "red", "house", "blue", "sky", "tree", "green", "on", "the", "left", "over"]


def make_t5(path, d_model: int = 32) -> None:
    """A tiny random T5 encoder + word-level tokenizer (pad 0, eos 1 appended), saved with safetensors."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, T5Config, T5EncoderModel
    wl = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    wl.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    wl.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    tok = PreTrainedTokenizerFast(tokenizer_object=wl, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    torch.manual_seed(0)
    cfg = T5Config(vocab_size=len(WORDS), d_model=d_model, d_kv=8, d_ff=64, num_layers=1, num_heads=4,
                   pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    T5EncoderModel(cfg).eval().save_pretrained(path)
    tok.save_pretrained(path)


def write_release(root, name: str, gcfg: GPTConfig, vcfg: VQConfig, seed: int) -> tuple[str, str]:
    """root/<name>.pt (GPT) and root/<name>_vq.pt in the released layout -> (gpt path, vq path)."""
    gpt, vq = root / f"{name}.pt", root / f"{name}_vq.pt"
    save_release(gpt_weights(gcfg, seed), gpt)
    save_release({**vq_weights(vcfg, seed + 1), **vq_release_extras(vcfg, seed)}, vq)
    return str(gpt), str(vq)


def convert(root, name: str, gcfg: GPTConfig, seed: int, vq_seed: int = 1, t5=None) -> str:
    """Released-layout pickles for a tiny GPT (+ a 2x VQ) converted by `python -m specviz convert llamagen`."""
    from specviz.__main__ import main
    g, v = root / f"{name}.pt", root / f"{name}_vq.pt"
    save_release(gpt_weights(gcfg, seed), g)
    vcfg = tiny_vq(ch_mult=(1, 1))
    save_release({**vq_weights(vcfg, vq_seed), **vq_release_extras(vcfg, vq_seed)}, v)
    out = root / f"{name}-converted"
    args = ["convert", "llamagen", "--gpt", str(g), "--vq", str(v), "--out", str(out), "--image-size",
            str(gcfg.grid * 2), "--n-head", str(gcfg.n_head), *(["--t5", str(t5)] if t5 else [])]
    assert main(args) == 0
    return str(out)


def converted_pair(root) -> tuple[str, str]:
    """A converted tiny target (4x4 grid, 64 codes, 2 layers of 64) and a smaller draft GPT (1 layer of 32) on the
    same VQ and text encoder: (target dir, draft dir)."""
    make_t5(root / "t5")
    target = convert(root, "t2i_tiny", tiny_gpt(), 0, t5=root / "t5")
    draft = convert(root, "t2i_tiny_draft", tiny_gpt(dim=32, n_layer=1, n_head=2), 10, t5=root / "t5")
    return target, draft
