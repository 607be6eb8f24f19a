"""LlamaGen text-to-image behind the model boundary (models/base.py), on a directory written by
`python -m specviz convert llamagen` (models/convert.py): config.json (family "llamagen"), gpt.safetensors,
vq.safetensors and optionally text_encoder/ (a T5 encoder + tokenizer, safetensors).

- Prompt: FLAN-T5-XL (`T5EncoderModel`) encodes the text padded to `cls_token_num` (120) tokens; as the reference's
  sample_t2i does, the valid tokens are moved to the end (left padding), padded rows are zeroed and hidden from every
  later query (a padded query sees only itself). A prompt may also be given as caption vectors directly: a
  (T, caption_dim) tensor (all valid) or a (vectors, mask) pair; that is how tests and the pinning script feed it.
  Text cleaning is lower-case + whitespace folding only: the reference's `clean_caption` (ftfy, bs4, URL and CJK
  stripping) is not reproduced; for plain prompts the text differs at most in punctuation spacing.
- CFG rows: row 0 conditional, row 1 the learned `uncond_embedding` under the same padding mask; guided logits
  u + s (c - u) in float32 only when s > 1 (as the reference), else one row.
- Positions: caption rows sit at sequence positions 0..T-1 (RoPE table zero), image position i at T + i and turns by
  its own (row, col); a flattened tree's nodes at equal depth share a position.
- KV cache: static (models/base.py): preallocated per layer (rows, kv_heads, caption + grid^2 + SCRATCH, hd) and
  never reallocated. `forward` pads its N tokens to bucket(N) rows, writes them after the committed ones by index copy
  and attends over the whole capacity; `commit` copies the kept path down and forgets the rest.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch
from PIL import Image

from specviz.engine.target import Prefilled
from specviz.models.base import (
    SCRATCH,
    bucket,
    compact_path,
    compiled,
    exact,
    guide,
    kept_rows,
    mark_static,
    no_pending,
    padded_inner,
    pick_device,
    static_mask,
)
from specviz.models.llamagen_net import FAMILY, T5_HUB, GPTConfig, LlamaGenGPT
from specviz.models.llamagen_vq import VQConfig, VQDecoder


@dataclass
class LlamaGenState:
    cache: list                 # per layer (K, V), each (rows, kv_heads, capacity, hd)
    visible: torch.Tensor       # (capacity,) bool: committed rows later tokens may attend to (caption padding: no)
    length: int                 # committed rows (caption + committed image tokens)
    cfg_scale: float
    rows: int                   # 2 with CFG (cond, uncond), else 1
    pending: int = 0            # scratch rows written by the last forward, awaiting commit


def clean_text(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).strip().lower()


class LlamaGenModel:
    def __init__(self, gpt: LlamaGenGPT, vq: VQDecoder | None, name: str = "llamagen", text_encoder=None):
        self.gpt, self.vq, self.name = gpt.eval(), (vq.eval() if vq is not None else None), name
        self.text_encoder = text_encoder          # callable str -> (vectors (T, d), mask (T,)), or None
        c = gpt.cfg
        self.grid = (c.grid, c.grid)
        self.codebook_size = c.vocab_size
        self.hidden_size = c.dim
        self.device = gpt.tok_embeddings.weight.device
        self.dtype = gpt.tok_embeddings.weight.dtype
        if vq is not None and vq.cfg.codebook_size != c.vocab_size:
            raise ValueError(f"the VQ codebook has {vq.cfg.codebook_size} codes but the GPT predicts {c.vocab_size}")
        self._run = gpt.run                                # the verification forward: torch.compile'd by compile()
        self.compiled, self.rows_for = False, exact         # eager: forwards of their own row count

    def compile(self) -> "LlamaGenModel":
        """Capture the fixed-shape verification forward with torch.compile (base.compiled: refuses in one line)."""
        self._run, self.compiled, self.rows_for = compiled(self.gpt.run), True, bucket
        return self

    # -- prompts ---------------------------------------------------------------------------------------------------
    def caption(self, prompt) -> tuple[torch.Tensor, torch.Tensor]:
        """prompt -> left-padded caption vectors (T, caption_dim) with padded rows zeroed, and the mask (T,) bool."""
        c = self.gpt.cfg
        if isinstance(prompt, str):
            if self.text_encoder is None:
                raise ValueError(f"LlamaGen model {self.name!r} has no text encoder: pass caption vectors")
            emb, mask = self.text_encoder(prompt)
        elif isinstance(prompt, (tuple, list)):
            emb, mask = prompt
        else:
            emb, mask = prompt, None
        emb = torch.as_tensor(emb).to(self.device, torch.float32)
        mask = torch.ones(emb.shape[0], dtype=torch.bool) if mask is None else torch.as_tensor(mask).bool()
        if emb.shape != (c.cls_token_num, c.caption_dim) or mask.shape != (c.cls_token_num,):
            raise ValueError(f"caption vectors must be ({c.cls_token_num}, {c.caption_dim}) with a "
                             f"({c.cls_token_num},) mask; got {tuple(emb.shape)} and {tuple(mask.shape)}")
        mask = mask.to(self.device)
        n = int(mask.sum())                               # T5 pads on the right: valid rows first
        if not mask[:n].all():
            raise ValueError("the caption mask must list the valid rows first (T5's right padding)")
        emb = torch.cat([emb[n:], emb[:n]]) if n else emb
        mask = torch.flip(mask, dims=[0])
        return emb * mask[:, None], mask

    # -- boundary ---------------------------------------------------------------------------------------------------
    @torch.inference_mode()
    def prefill(self, prompt, cfg_scale: float) -> Prefilled:
        c = self.gpt.cfg
        emb, mask = self.caption(prompt)
        rows = 2 if cfg_scale > 1 else 1
        x = self.gpt.caption_rows(emb, uncond=rows == 2)
        t = c.cls_token_num
        cap = t + c.grid * c.grid + SCRATCH
        state = LlamaGenState(self.gpt.new_cache(rows, cap), torch.zeros(cap, dtype=torch.bool, device=self.device),
                              t, float(cfg_scale), rows)
        if self.compiled:
            mark_static(state.cache)
        state.visible[:t] = mask
        eye = torch.eye(t, dtype=torch.bool, device=self.device)
        att = torch.tril(torch.ones(t, t, dtype=torch.bool, device=self.device)) & (mask[None, :] | eye)
        att = static_mask(mask[:0], att, cap if self.compiled else t)
        seq = torch.arange(t, device=self.device)
        h = self.gpt.run(x, seq, state.cache, seq, att[None, None])
        logits, hidden = self._mix(h[:, -1:], state)
        return Prefilled(state, logits[0], hidden[0])

    @torch.inference_mode()
    def forward(self, state: LlamaGenState, tokens: torch.Tensor, positions: torch.Tensor,
                tree_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        no_pending(state.pending)
        tokens = torch.as_tensor(tokens, device=self.device).long().view(-1)
        positions = torch.as_tensor(positions, device=self.device).long().view(-1)
        n, t = tokens.numel(), state.length
        if n == 0:
            return torch.zeros(0, self.codebook_size), torch.zeros(0, self.hidden_size)
        m = self.rows_for(n)                                  # compiled: padded, one shape per bucket
        if tree_mask is None:
            inner = torch.tril(torch.ones(n, n, dtype=torch.bool, device=self.device))
        else:
            inner = torch.as_tensor(tree_mask, device=self.device).bool() | torch.eye(n, dtype=torch.bool,
                                                                                        device=self.device)
        width = state.visible.numel() if self.compiled else t + m      # eager: the rows in use (the old sums)
        att = static_mask(state.visible[:t], padded_inner(inner, m), width)
        toks = torch.zeros(m, dtype=torch.long, device=self.device)
        pos = torch.zeros(m, dtype=torch.long, device=self.device)
        toks[:n], pos[:n] = tokens, positions
        x = self.gpt.tok_embeddings(toks).expand(state.rows, m, -1)
        rows = torch.arange(t, t + m, device=self.device)
        h = self._run(x, self.gpt.cfg.cls_token_num + pos, state.cache, rows, att[None, None])
        state.visible[t:t + n] = True
        state.pending = n
        return self._mix(h[:, :n], state)

    @torch.inference_mode()
    def commit(self, state: LlamaGenState, kept: torch.Tensor) -> None:
        kept = kept_rows(kept, state.pending)
        n, t, k = state.pending, state.length, kept.numel()
        compact_path(state.cache, t, kept, self.device)
        state.visible[t + k:t + n] = False
        state.length, state.pending = t + k, 0

    def _mix(self, h: torch.Tensor, state: LlamaGenState) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.gpt.output(h).float()
        guided = guide(logits, state.rows, state.cfg_scale)
        return guided, h[0].float()

    # -- extras -----------------------------------------------------------------------------------------------------
    def code_vectors(self) -> torch.Tensor:
        """(V, 8) float32 VQ codebook, l2-normalised as the decoder is fed."""
        return self._vq().code_vectors().detach().float()

    @torch.inference_mode()
    def embed_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.gpt.tok_embeddings(torch.as_tensor(tokens, device=self.device).long()).float()

    @torch.inference_mode()
    def output_head(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.gpt.output(hidden.to(self.device, self.dtype)).float()

    @torch.inference_mode()
    def decode_pixels(self, tokens: torch.Tensor) -> torch.Tensor:
        """(H*W,) codes -> (3, 16H, 16W) float32 decoder output (about [-1, 1])."""
        codes = torch.as_tensor(tokens, device=self.device).long().view(1, *self.grid)
        return self._vq()(codes)[0].float()

    def decode_image(self, tokens: torch.Tensor) -> Image.Image:
        """As the reference saves it: clamp to [-1, 1], map to [0, 255], round half up."""
        px = ((self.decode_pixels(tokens).clamp(-1, 1) + 1) / 2 * 255 + 0.5).floor().clamp(0, 255)
        return Image.fromarray(px.permute(1, 2, 0).to(torch.uint8).cpu().numpy())

    def _vq(self) -> VQDecoder:
        if self.vq is None:
            raise ValueError(f"LlamaGen model {self.name!r} was converted without a VQ decoder (--vq)")
        return self.vq


# -- loading ----------------------------------------------------------------------------------------------------------
def is_llamagen_dir(path) -> bool:
    p = Path(str(path)).expanduser() / "config.json"
    try:
        return p.is_file() and json.loads(p.read_text()).get("family") == FAMILY
    except (OSError, ValueError, AttributeError):
        return False


class T5Captions:
    """str -> (last hidden states (T, d) float32, attention mask (T,) bool) through `T5EncoderModel`."""

    def __init__(self, tokenizer, encoder, length: int):
        self.tokenizer, self.encoder, self.length = tokenizer, encoder.eval(), length

    @torch.inference_mode()
    def __call__(self, text: str):
        enc = self.tokenizer([clean_text(text)], max_length=self.length, padding="max_length", truncation=True,
                             return_attention_mask=True, add_special_tokens=True, return_tensors="pt")
        dev = next(self.encoder.parameters()).device
        out = self.encoder(input_ids=enc["input_ids"].to(dev), attention_mask=enc["attention_mask"].to(dev))
        return out.last_hidden_state[0].float(), enc["attention_mask"][0].bool()


@lru_cache(maxsize=2)
def text_encoder(src: str, length: int, device: str, dtype: str) -> T5Captions:
    """A T5 encoder + tokenizer from a local directory or the local HF cache (never downloads; safetensors only)."""
    # transformers (slow to import) only when a LlamaGen caption is encoded
    from transformers import AutoTokenizer, T5EncoderModel
    try:
        tok = AutoTokenizer.from_pretrained(src, local_files_only=True)
        enc = T5EncoderModel.from_pretrained(src, dtype=getattr(torch, dtype), use_safetensors=True,
                                             local_files_only=True)
    except OSError as e:
        raise FileNotFoundError(
            f"LlamaGen's text encoder {src!r} is not available locally ({str(e).splitlines()[0][:160]}); "
            f"download it (hf download {T5_HUB}) or convert with --t5 DIR") from None
    return T5Captions(tok, enc.to(device), length)


def load_llamagen(path, device="auto", dtype=None) -> LlamaGenModel:
    """A converted LlamaGen directory -> LlamaGenModel (safetensors only; the text encoder loads on first use)."""
    # on demand: only when a LlamaGen checkpoint loads
    from safetensors.torch import load_file

    from specviz.models.convert import CheckpointError, check_state  # convert imports this module's family
    root = Path(str(path)).expanduser()
    if not (root / "config.json").is_file():
        raise FileNotFoundError(f"LlamaGen checkpoint {str(path)!r} is not available: there is no {root}/config.json "
                                "(convert the released .pt files with: python -m specviz convert llamagen ...)")
    conf = json.loads((root / "config.json").read_text())
    if conf.get("family") != FAMILY:
        raise CheckpointError(f"{root} holds a {conf.get('family') or conf.get('model_type') or 'unknown'!r} "
                              f"checkpoint, not a converted LlamaGen one (config.json family must be {FAMILY!r})")
    dev, dt = pick_device(device, dtype)
    with torch.device("meta"):                    # no weights allocated twice: the loaded tensors are taken over
        gpt = LlamaGenGPT(GPTConfig(**conf["gpt"]))
        vq = VQDecoder(VQConfig(**conf["vq"])) if (root / "vq.safetensors").is_file() else None
    check_state(gpt, load_file(root / "gpt.safetensors"), f"{root}/gpt.safetensors", load=True)
    if vq is not None:
        check_state(vq, load_file(root / "vq.safetensors"), f"{root}/vq.safetensors", load=True)
        vq = vq.to(dev, torch.float32)            # the decoder stays float32 (as LlamaGen's sample scripts run it)
    model = LlamaGenModel(gpt.to(dev, dt), vq, name=str(path))
    src = root / "text_encoder" if (root / "text_encoder").is_dir() else conf.get("text_encoder") or T5_HUB
    length = gpt.cfg.cls_token_num
    model.text_encoder = lambda text: text_encoder(str(src), length, str(dev), str(dt).split(".")[-1])(text)
    return model
