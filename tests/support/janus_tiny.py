"""A complete tiny random Janus checkpoint (model + tokenizer + processor + chat template), built offline and saved
with save_pretrained (docs/janus.md §9), so tests load it through the same `--model PATH` path a user takes.
Shared by tests/models/test_janus.py and tests/models/test_janus_engine.py."""
from __future__ import annotations

import torch

WORDS = ["<pad>", "<bos>", "<eos>", "<image_placeholder>", "<begin_of_image>", "<end_of_image>", "<unk>",
         "User:", "Assistant:", "a", "red", "house", "blue", "sky", "tree", "green"]
TEMPLATE = ("{{ bos_token }}{% for m in messages %}{{ m['role'] | capitalize }}: {% for c in m['content'] %}"
            "{{ c['text'] }} {% endfor %}{% endfor %}{% if add_generation_prompt %}Assistant: {% endif %}")


def make_tiny_checkpoint(path, seed: int = 0, peak: float = 200.0) -> None:
    """Write a complete tiny random Janus checkpoint (4x4 grid, 64 codes, 8x8 px) into `path`.
    `peak` scales the image head so the laws are far from uniform (random init gives logit std ~0.01)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        JanusConfig,
        JanusForConditionalGeneration,
        JanusImageProcessorPil,
        JanusProcessor,
        PreTrainedTokenizerFast,
    )
    wl = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    wl.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=wl, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>", unk_token="<unk>",
        extra_special_tokens={"image_token": "<image_placeholder>", "boi_token": "<begin_of_image>",
                              "eoi_token": "<end_of_image>"})
    proc = JanusProcessor(image_processor=JanusImageProcessorPil(size={"height": 32, "width": 32}),
                          tokenizer=tok, chat_template=TEMPLATE, num_image_tokens=16)
    cfg = JanusConfig(
        text_config=dict(model_type="llama", vocab_size=len(WORDS), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2),
        vision_config=dict(image_size=32, patch_size=8, num_image_tokens=16, hidden_size=32,
                           num_hidden_layers=1, num_attention_heads=4, projection_dim=32, mlp_ratio=2),
        vq_config=dict(embed_dim=8, num_embeddings=64, latent_channels=32, base_channels=32,
                       channel_multiplier=[1, 1], num_res_blocks=1, projection_dim=32, image_token_embed_dim=32),
        image_token_id=3)
    torch.manual_seed(seed)
    model = JanusForConditionalGeneration(cfg).eval()
    with torch.no_grad():
        model.model.generation_head.vision_head.weight.mul_(peak)
    gc = model.generation_config
    gc.pad_token_id, gc.bos_token_id = 0, 1
    gc.generation_kwargs = {"boi_token_id": 4}
    gc._from_model_config = False                 # else generation_kwargs is dropped on load (docs/janus.md §9)
    model.save_pretrained(path)
    proc.save_pretrained(path)


def tiny_pair(root) -> tuple[str, str]:
    """A target (seed 0) and a draft model (seed 1) of the same shapes, saved under root: (target path, draft path)."""
    make_tiny_checkpoint(root / "target", seed=0)
    make_tiny_checkpoint(root / "draft", seed=1)
    return str(root / "target"), str(root / "draft")
