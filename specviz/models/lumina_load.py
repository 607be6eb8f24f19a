"""Load a Lumina-mGPT release directory (docs/gpu.md, Lumina-mGPT) into models/lumina.py's boundary.

A release directory (e.g. `huggingface-cli download Alpha-VLLM/Lumina-mGPT-7B-768 --local-dir DIR`) holds
config.json (model_type "chameleon", architectures ChameleonXLLMXForConditionalGeneration), safetensors shards
in the transformers Chameleon key layout, and the tokenizer. The Chameleon VQGAN is converted into the same
directory once (`specviz convert lumina-vqgan` -> vqgan.safetensors + vqgan.json). Safetensors only; no remote code.

What differs between the release and transformers 5.x's `ChameleonForConditionalGeneration`, and how:
- q_norm / k_norm weight and bias: the release (Lumina's copy of the 4.4x modeling) stores one (head_dim,) row per
  model-parallel shard, shape (model_parallel_size, head_dim), applied to heads // model_parallel_size consecutive
  heads; transformers 5.x stores one row per head, (num_heads | num_key_value_heads, head_dim). Expanded here with
  repeat_interleave over heads (exact).
- model.vqmodel.* (the VQ encoder, kept by Lumina's save_pretrained) is unused for generation: ignored; our
  module is deleted before loading, so its random init is never built.
- config keys z_loss_weight, mask_image_logits, dropout (Lumina's own) are carried as extra attributes and do not
  affect inference; mask_image_logits is moot because ChameleonForConditionalGeneration.forward is never called.
- image vocabulary: codes <-> BPE ids come from the IMGIMG token names in config.vocabulary_map (the same rule as
  Chameleon's VocabTranslation), so logits are read in VQ-code order.
The output resolution is not in the release's files: a `specviz.json` beside config.json ({"resolution": 768} or
{"height": H, "width": W}, pixels, multiples of 32) wins, else the directory name's trailing number
(Lumina-mGPT-7B-768 -> 768).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from specviz.models.base import pick_device

IGNORED = ("model.vqmodel.",)
HUB_PREFIX = "Alpha-VLLM/Lumina-mGPT"
SPECIAL = {"bos": "<s>", "boi": "<racm3:break>", "eoi": "<eoss>", "eol": "<reserved08799>",
           "res0": "<reserved08800>", "sep": "<reserved08706>"}


def config_of(folder) -> dict | None:
    p = Path(folder) / "config.json"
    try:
        return json.loads(p.read_text()) if p.is_file() else None
    except (OSError, ValueError):
        return None


def is_lumina(name: str) -> bool:
    """A local directory whose config.json says model_type 'chameleon', or a Lumina-mGPT hub id (refused clearly)."""
    if name.startswith(HUB_PREFIX):
        return True
    cfg = config_of(Path(name).expanduser()) if Path(name).expanduser().is_dir() else None
    return bool(cfg) and cfg.get("model_type") == "chameleon"


def image_vocab(vocab: dict, n_codes: int) -> torch.Tensor:
    """config.vocabulary_map -> (n_codes,) BPE id of each VQ code, from the IMGIMG names (letters A-J = digits)."""
    digits = str.maketrans({chr(ord("A") + i): str(i) for i in range(10)})
    bpe = {}
    for name, tok in vocab.items():
        if name.startswith("IMGIMG"):
            bpe[int(name[len("IMGIMG"):-1].translate(digits))] = int(tok)
    if sorted(bpe) != list(range(n_codes)):
        raise ValueError(f"config.vocabulary_map has {len(bpe)} IMGIMG image tokens; the VQGAN has {n_codes} codes "
                         "(they must name every code 0..n-1 once)")
    return torch.tensor([bpe[c] for c in range(n_codes)], dtype=torch.long)


def grids_of(folder: Path) -> tuple[int, int]:
    side = folder / "specviz.json"
    if side.is_file():
        s = json.loads(side.read_text())
        hw = (s.get("height", s.get("resolution")), s.get("width", s.get("resolution")))
    else:
        m = re.search(r"-(\d{3,4})(?=-|$)", folder.name)          # Lumina-mGPT-7B-768, …-768-Omni
        hw = (int(m.group(1)),) * 2 if m else (None, None)
    if not all(isinstance(v, int) and v > 0 and v % 32 == 0 for v in hw):
        raise ValueError(f"{folder}: the output resolution is unknown; write specviz.json with {{\"resolution\": 768}} "
                         "(pixels, a multiple of 32) beside config.json, or keep the release's directory name "
                         "(…-512, …-768, …-1024)")
    return hw[0] // 32, hw[1] // 32


def read_safetensors(folder: Path, device) -> dict:
    # on demand: only when a Lumina-mGPT checkpoint loads
    from safetensors.torch import load_file
    files = sorted(folder.glob("*.safetensors"))
    files = [f for f in files if f.name != "vqgan.safetensors"]
    if not files:
        raise FileNotFoundError(f"{folder} has no model *.safetensors (config.json, model*.safetensors)")
    sd = {}
    for f in files:
        sd.update(load_file(str(f), device=str(device)))
    return sd


def fit_state(sd: dict, want: dict, heads: dict, where: str) -> dict:
    """Check the release's keys and shapes against our module's; expand per-shard qk-norm rows. One clear error."""
    sd = {k: v for k, v in sd.items() if not k.startswith(IGNORED)}
    missing, extra = sorted(set(want) - set(sd)), sorted(set(sd) - set(want))
    if missing:
        raise ValueError(f"{where}: {len(missing)} weight(s) missing, e.g. {missing[0]!r}")
    if extra:
        raise ValueError(f"{where}: {len(extra)} unexpected weight(s), e.g. {extra[0]!r}")
    out = {}
    for k, v in sd.items():
        shape = want[k]
        kind = next((n for n in ("q_norm", "k_norm") if f".self_attn.{n}." in k), None)
        if kind and tuple(v.shape) != shape and v.dim() == 2 and v.shape[1] == shape[1] \
                and heads[kind] % v.shape[0] == 0:
            v = v.repeat_interleave(heads[kind] // v.shape[0], dim=0)
        if tuple(v.shape) != shape:
            raise ValueError(f"{where}: weight {k!r} has shape {tuple(v.shape)}, expected {shape}")
        out[k] = v
    return out


def _tokenizer(folder: Path):
    if not any((folder / f).is_file() for f in ("tokenizer.json", "tokenizer_config.json")):
        return None
    # transformers (slow to import) only when a Lumina-mGPT checkpoint loads
    from transformers import AutoTokenizer
    return AutoTokenizer.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)


def load_lumina(model: str, device="auto", dtype=None):
    """A local Lumina-mGPT release directory (plus its converted VQGAN) -> LuminaModel."""
    # transformers and the Lumina backend only when a Lumina-mGPT checkpoint loads (the model list probes without them)
    from transformers import ChameleonConfig, ChameleonForConditionalGeneration
    from transformers.models.chameleon.modeling_chameleon import ChameleonRotaryEmbedding

    from specviz.models.chameleon_vq import load_vqgan
    from specviz.models.lumina import LuminaModel
    dev, dt = pick_device(device, dtype)
    folder = Path(model).expanduser()
    if not folder.is_dir():
        how = (f"download it (hf download {model} --local-dir DIR), convert Meta's VQGAN into DIR "
               "(python -m specviz convert lumina-vqgan --ckpt vqgan.ckpt --yaml vqgan.yaml --out DIR) "
               "and pass --model DIR"
               if model.startswith(HUB_PREFIX) else f"there is no directory {folder}")
        raise FileNotFoundError(f"Lumina-mGPT checkpoint {model!r} is not available: {how}")
    raw = config_of(folder)
    if raw is None:
        raise FileNotFoundError(f"{folder} has no readable config.json")
    if raw.get("model_type") != "chameleon":
        raise ValueError(f"{folder}: config.json says model_type {raw.get('model_type')!r}; a Lumina-mGPT checkpoint "
                         "is a 'chameleon' model")
    grids = grids_of(folder)
    vq = load_vqgan(folder, dev)
    vocab = raw.get("vocabulary_map") or {}
    missing = [n for k, n in SPECIAL.items() if n not in vocab and k != "bos"]
    if missing:
        raise ValueError(f"{folder}: config.vocabulary_map lacks {missing[0]!r} (needed for Lumina-mGPT's layout)")
    ids = {k: int(vocab[n]) for k, n in SPECIAL.items() if n in vocab}
    tok = _tokenizer(folder)
    bos = None if tok is None else (tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id)
    ids["bos"] = bos if bos is not None else ids.get("bos")               # Lumina's Tokenizer: bos, else eos
    ids["sep_text"] = SPECIAL["sep"]
    if max(grids) > 99 or f"<reserved{8800 + max(grids):05d}>" not in vocab:
        raise ValueError(f"{folder}: no resolution token for {max(grids)} grids")
    img_bpe = image_vocab(vocab, vq.params["n_embed"])
    cfg = ChameleonConfig.from_pretrained(str(folder))
    cfg._attn_implementation = "sdpa"
    with torch.device("meta"):
        net = ChameleonForConditionalGeneration(cfg)
    net.model.vqmodel = None
    want = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    sd = read_safetensors(folder, "cpu" if dev.type == "meta" else dev)
    if cfg.tie_word_embeddings and "lm_head.weight" not in sd and "model.embed_tokens.weight" in sd:
        sd["lm_head.weight"] = sd["model.embed_tokens.weight"]
    heads = {"q_norm": cfg.num_attention_heads, "k_norm": cfg.num_key_value_heads}
    net.load_state_dict(fit_state(sd, want, heads, str(folder)), assign=True)
    net.model.rotary_emb = torch.nn.Identity()          # its inv_freq is a non-persistent buffer, still on meta
    net = net.to(dev, dt)
    net.model.rotary_emb = ChameleonRotaryEmbedding(config=cfg).to(dev)      # float32, as from_pretrained has it
    left = [n for n, t in list(net.named_parameters()) + list(net.named_buffers()) if t.is_meta]
    if left:
        raise ValueError(f"{folder}: {left[0]!r} was not loaded")
    return LuminaModel(net.eval(), vq, ids, img_bpe, grids, tok, name=model)
