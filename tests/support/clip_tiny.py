"""A tiny random CLIP written in the released layout (what `save_pretrained` of openai/clip-vit-large-patch14
leaves under transformers 5: config.json, model.safetensors, processor_config.json, tokenizer vocab.json /
merges.txt / tokenizer.json / tokenizer_config.json), made here: a byte-level BPE vocabulary of the 256 byte symbols
(each also with CLIP's end-of-word mark) and a few merges, no hub."""
from __future__ import annotations

import json
from pathlib import Path

import torch


def _byte_symbols() -> list[str]:
    """GPT-2 / CLIP's bytes_to_unicode table, in byte order."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    out, n = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + n)
            n += 1
    return [out[b] for b in range(256)]


def make_tiny_clip(folder, seed: int = 0) -> Path:
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    syms = _byte_symbols()
    merges = ["r e", "h o", "ho u", "hou s", "s e</w>", "e d</w>"]
    vocab = syms + [s + "</w>" for s in syms] + ["re", "ho", "hou", "hous", "se</w>", "ed</w>"]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    (folder / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(vocab)}))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    tok = CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"), model_max_length=16)
    cfg = CLIPConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, max_position_embeddings=16, bos_token_id=len(vocab) - 2,
                         eos_token_id=len(vocab) - 1, pad_token_id=len(vocab) - 1),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                           image_size=32, patch_size=8), projection_dim=16)
    torch.manual_seed(seed)
    model = CLIPModel(cfg).eval()
    model.save_pretrained(folder, safe_serialization=True)
    images = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=images, tokenizer=tok).save_pretrained(folder)
    return folder
