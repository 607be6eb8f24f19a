"""Random-weight models in the released layouts, for scripts/gpu_bench.py --all: Janus-Pro-7B, LlamaGen-XL (t2i,
256 px) and Lumina-mGPT-7B (768 px), built directly on the device (no hub, no conversion). `tiny` builds the same
classes at CPU shapes (the bench's fast-lane test). Each builder returns a `Layout`: the backend, a text prompt the
backend accepts without its tokenizer or text encoder, and the weight bytes one AR step reads (the HBM lower bound's
numerator: every matrix the step multiplies, not the embedding tables of which it reads one row)."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.models.janus import JanusModel
from specviz.models.llamagen import LlamaGenModel
from specviz.models.llamagen_net import GPTConfig, LlamaGenGPT, ffn_hidden
from specviz.models.llamagen_vq import VQConfig, VQDecoder
from specviz.models.lumina import LuminaModel

CARDS = (("H200", 4.8), ("H100 SXM", 3.35), ("A100 80GB", 2.0))     # nominal HBM bandwidth, TB/s


def card(name: str) -> tuple[str, float | None]:
    """A CUDA device name -> (card, TB/s): the table above, matched on the name; else ('unknown', None)."""
    n = name.upper()
    if "H200" in n:
        return CARDS[0]
    if "H100" in n and "PCIE" not in n and "NVL" not in n:          # the SXM part reports "H100 80GB HBM3"
        return CARDS[1]
    if "A100" in n and "80GB" in n.replace(" ", ""):
        return CARDS[2]
    return "unknown", None


@dataclass
class Layout:
    name: str
    model: object
    prompt: str
    step_bytes: int                 # weight bytes one AR step reads


def _bytes(mod: torch.nn.Module, skip: tuple = ()) -> int:
    return sum(p.numel() * p.element_size() for n, p in mod.named_parameters() if not n.startswith(skip))


def janus(tiny: bool, device, dtype) -> Layout:
    """Janus-Pro-7B (hidden 4096, 30 layers, 32 heads, MLP 11008, 16384 codes, 24x24) or tiny shapes."""
    from transformers import JanusConfig, JanusForConditionalGeneration  # transformers: only this backend needs it
    if tiny:
        text = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=512)
        vision, vq = dict(image_size=64, patch_size=8, num_image_tokens=64), dict(num_embeddings=256,
                                                                                 base_channels=32,
                                                                                 channel_multiplier=[1, 1],
                                                                                 num_res_blocks=1, latent_channels=32)
    else:
        text = dict(vocab_size=102400, hidden_size=4096, intermediate_size=11008, num_hidden_layers=30,
                    num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=16384, rms_norm_eps=1e-6)
        vision, vq = dict(image_size=384, patch_size=16, num_image_tokens=576), dict(num_embeddings=16384)
    h = text["hidden_size"]
    cfg = JanusConfig(text_config=dict(model_type="llama", pad_token_id=0, bos_token_id=1, eos_token_id=2, **text),
                      vision_config=dict(hidden_size=64, num_hidden_layers=1, num_attention_heads=4,
                                         projection_dim=h, **vision),
                      vq_config=dict(embed_dim=8, projection_dim=h, image_token_embed_dim=h, **vq), image_token_id=3)
    torch.manual_seed(0)
    with torch.device(device):
        net = JanusForConditionalGeneration._from_config(cfg, dtype=dtype, attn_implementation="sdpa").eval()
    gc = net.generation_config
    gc.pad_token_id, gc.bos_token_id, gc.generation_kwargs = 0, 1, {"boi_token_id": 4}
    model = JanusModel(net, None, name="janus-pro-7b-layout" + ("-tiny" if tiny else ""))
    ids = [1] + [5 + i % 50 for i in range(22)] + [4]                  # BOS, 22 words, begin-of-image
    model.encode_prompt = lambda prompt: torch.tensor(ids, device=model.device)    # no tokenizer: fixed ids
    step = _bytes(model.lm, ("embed_tokens",)) + _bytes(model.head) + _bytes(net.model.generation_aligner)
    return Layout("Janus-Pro-7B", model, "a random prompt", step)


def llamagen(tiny: bool, device, dtype, grid: int = 16) -> Layout:
    """LlamaGen GPT-XL t2i (36 layers of 1280, 20 heads, 16384 codes, 120 T5 caption rows, `grid` x `grid`: 16 at
    256 px, 32 at 512 px) or tiny shapes."""
    cfg = (GPTConfig(dim=64, n_layer=2, n_head=4, ffn_hidden=ffn_hidden(64), vocab_size=256, caption_dim=32, grid=8)
           if tiny else GPTConfig(grid=grid))
    vcfg = VQConfig(codebook_size=cfg.vocab_size, ch=32, ch_mult=[1, 1], z_channels=32) if tiny else VQConfig()
    torch.manual_seed(0)
    with torch.device(device):
        gpt = LlamaGenGPT(cfg).to(dtype).eval()
        vq = VQDecoder(vcfg).eval()                                  # float32, as the loader keeps it
    model = LlamaGenModel(gpt, vq, name="llamagen-xl-layout" + ("-tiny" if tiny else ""))
    g = torch.Generator().manual_seed(0)
    cap = torch.randn(cfg.cls_token_num, cfg.caption_dim, generator=g)
    model.text_encoder = lambda text: (cap, torch.arange(cfg.cls_token_num) < 24)   # no T5: fixed caption rows
    return Layout("LlamaGen-XL", model, "a random prompt", _bytes(gpt, ("tok_embeddings", "cls_embedding")))


class _Codebook(torch.nn.Module):
    """The VQGAN's codebook only (the drafters' code vectors); the bench never decodes pixels."""

    def __init__(self, codes: int, dim: int):
        super().__init__()
        self.quantize = torch.nn.Module()
        self.quantize.embedding = torch.nn.Embedding(codes, dim)


def _lumina_vocab(codes: int) -> dict:
    """Chameleon's ids as Lumina-mGPT uses them: image tokens 4.. in code order, <eoss>, <racm3:break>, reserved."""
    digits = lambda n: "".join(chr(ord("A") + int(d)) for d in str(n))           # noqa: E731
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<pad>": 3}
    vocab.update({f"IMGIMG{digits(c)}Z": 4 + c for c in range(codes)})
    vocab.update({"<eoss>": 8196, "<racm3:break>": 8197})
    vocab.update({f"<reserved{i - 4:05d}>": i for i in range(8198, 8900)})
    return vocab


def lumina(tiny: bool, device, dtype) -> Layout:
    """Lumina-mGPT-7B-768 (Chameleon-7B: 32 layers of 4096, 32 heads, MLP 11008, vocab 65536; 24x24 grids = 48x48
    codes plus an EOL per row) or tiny shapes (2x3 grids, the first 256 image tokens as the codebook)."""
    from transformers import ChameleonConfig, ChameleonForConditionalGeneration  # only this backend needs it
    codes = 256 if tiny else 8192                                   # tiny: the first 256 image tokens only
    vocab = _lumina_vocab(8192)
    size = (dict(vocab_size=8916, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=512) if tiny else
            dict(vocab_size=65536, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=10240))
    cfg = ChameleonConfig(rms_norm_eps=1e-5, vocabulary_map=vocab, vq_config=dict(embed_dim=256, num_embeddings=8192),
                          **size)
    torch.manual_seed(0)
    with torch.device(device):
        net = ChameleonForConditionalGeneration._from_config(cfg, dtype=dtype, attn_implementation="sdpa").eval()
        book = _Codebook(codes, 256).eval()
    net.model.vqmodel = None                                         # the bench decodes no pixels
    ids = {"boi": 8197, "eol": 8803, "res0": 8804, "bos": 1, "sep_text": "<reserved08706>"}
    model = LuminaModel(net, book, ids, torch.arange(4, 4 + codes), (2, 3) if tiny else (24, 24),
                        name="lumina-mgpt-7b-layout" + ("-tiny" if tiny else ""))
    prompt_ids = [1] + [8900 + i % 16 for i in range(30)]
    model.encode_prompt = lambda prompt: list(prompt_ids)           # no tokenizer: fixed ids
    step = _bytes(net.model, ("embed_tokens", "vqmodel")) + model.img_head.numel() * model.img_head.element_size()
    return Layout("Lumina-mGPT-7B", model, "a random prompt", step)


LAYOUTS = (janus, llamagen, lumina)
