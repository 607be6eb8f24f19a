"""Janus-Pro behind the model boundary (models/base.py), driven by our own loop (docs/janus.md).

`JanusForConditionalGeneration` is used only as a container of modules: prompts go through the text embeddings,
image codes through `prepare_embeddings_for_image_generation`, hidden states through `generation_head`.

- CFG rows follow transformers' layout: row 0 conditional, row 1 unconditional (the prompt with every token except
  BOS and begin-of-image replaced by the pad id). Guided logits u + s (c - u) in float32. With s <= 1 only the
  conditional row runs (transformers applies CFG only above 1, and the cost halves).
- Positions are explicit: image position i sits at sequence position P + i (P = prompt length), so a flattened
  tree's nodes at equal depth share a position.
- KV cache: a transformers `StaticCache` of prompt + grid^2 + SCRATCH rows (models/base.py), never reallocated.
  `forward` pads its N tokens to bucket(N) rows, written by index copy after the committed ones; `commit` compacts the
  kept rows to the end of the committed region by index copy and resets every layer's length (no crop, no cat).
  Every forward passes a 4-D additive float mask (rows, 1, bucket(N), capacity), which transformers' mask builder
  returns unchanged (sdpa and eager accept it): one shape per bucket, so torch.compile / CUDA graphs capture it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from PIL import Image

from specviz.engine.target import Prefilled
from specviz.models.base import (
    SCRATCH,
    additive,
    bucket,
    compact_path,
    compiled,
    exact,
    guide,
    kept_rows,
    no_pending,
    padded_inner,
    pick_device,
    static_mask,
)

_TRUE = {"1", "ON", "YES", "TRUE"}


@dataclass
class JanusState:
    """Decoding state of one prompt: the KV cache and how much of it is committed."""
    cache: object               # transformers StaticCache; rows (cond[, uncond]) x heads x capacity x dh per layer
    prefix: int                 # prompt length P: image position i has sequence position P + i
    length: int                 # committed cache rows (prompt + committed image tokens)
    cfg_scale: float            # guidance scale s
    rows: int                   # 2 with CFG (cond, uncond), else 1
    pending: int = 0            # scratch rows appended by the last forward, awaiting commit


class JanusModel:
    """Model boundary over a loaded `JanusForConditionalGeneration` (plus its processor for text prompts)."""

    def __init__(self, model, processor=None, name: str = "janus"):
        self.model = model.eval()
        self.processor = processor
        self.name = name
        self.lm = model.model.language_model
        self.head = model.model.generation_head
        cfg = model.config
        n = cfg.vq_config.num_patches
        if cfg.vision_config.num_image_tokens != n * n:
            raise ValueError(f"num_image_tokens={cfg.vision_config.num_image_tokens} does not match the "
                             f"{n}x{n} VQ grid; set vision_config.num_image_tokens = (image_size // patch_size) ** 2")
        if self.lm.config._attn_implementation not in ("sdpa", "eager"):
            raise ValueError("tree verification needs a 4-D attention mask: load with attn_implementation='sdpa'")
        self.grid = (n, n)
        self.codebook_size = cfg.vq_config.num_embeddings
        self.hidden_size = cfg.text_config.hidden_size
        self.device = next(model.parameters()).device
        self.dtype = next(self.lm.parameters()).dtype
        self._ids = self._special_ids()
        self._lm = self.lm                                 # the verification forward: torch.compile'd by compile()
        self.compiled, self.rows_for = False, exact         # eager: forwards of their own row count

    def compile(self) -> "JanusModel":
        """Capture the fixed-shape verification forward with torch.compile (base.compiled: refuses in one line)."""
        self._lm, self.compiled, self.rows_for = compiled(self.lm), True, bucket
        return self

    # -- prompts ---------------------------------------------------------------------------------------------------
    def _special_ids(self) -> dict:
        """BOS, begin-of-image and pad ids: from the tokenizer when there is one, else the generation config."""
        gc = self.model.generation_config
        tok = getattr(self.processor, "tokenizer", None)
        boi = getattr(tok, "boi_token_id", None) if tok is not None else None
        ids = {"bos": getattr(tok, "bos_token_id", None), "boi": boi, "pad": getattr(tok, "pad_token_id", None)}
        fallback = {"bos": gc.bos_token_id, "boi": (gc.generation_kwargs or {}).get("boi_token_id"),
                    "pad": gc.pad_token_id}
        return {k: v if v is not None else fallback[k] for k, v in ids.items()}

    def encode_prompt(self, prompt: str | list[int]) -> torch.Tensor:
        """Text -> (P,) prompt ids in image mode (chat template + begin-of-image); a list of ids passes through."""
        if not isinstance(prompt, str):
            return torch.as_tensor(prompt, dtype=torch.long, device=self.device).view(-1)
        if self.processor is None:
            raise ValueError("this JanusModel has no processor: pass prompt token ids instead of text")
        messages = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
        text = self.processor.apply_chat_template(messages, add_generation_prompt=True)
        inputs = self.processor(text=text, generation_mode="image", return_tensors="pt")
        return inputs["input_ids"][0].to(self.device)

    def _uncond(self, ids: torch.Tensor) -> torch.Tensor:
        """The unconditional prompt: every token except BOS and begin-of-image replaced by the pad id."""
        keep = (ids == self._ids["bos"]) | (ids == self._ids["boi"])
        return torch.where(keep, ids, torch.full_like(ids, self._ids["pad"]))

    # -- boundary ---------------------------------------------------------------------------------------------------
    @torch.inference_mode()
    def prefill(self, prompt: str | list[int], cfg_scale: float) -> Prefilled:
        """Encode the prompt (cond row, plus the uncond row when cfg_scale > 1); return the law of position 0."""
        from transformers import StaticCache  # transformers: needed only by this backend
        ids = self.encode_prompt(prompt)
        rows = torch.stack([ids, self._uncond(ids)]) if cfg_scale > 1 else ids[None]      # (rows, P)
        cap = len(ids) + self.grid[0] * self.grid[1] + SCRATCH
        cache = StaticCache(config=self.model.config.text_config, max_cache_len=cap)
        out = self.lm(inputs_embeds=self.model.get_input_embeddings()(rows), cache=cache, use_cache=True)
        state = JanusState(cache, len(ids), len(ids), float(cfg_scale), rows.shape[0])
        logits, hidden = self._mix(out.last_hidden_state[:, -1:], state)
        return Prefilled(state, logits[0], hidden[0])

    @torch.inference_mode()
    def forward(self, state: JanusState, tokens: torch.Tensor, positions: torch.Tensor,
                tree_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """tokens (N,) at image positions (N,), optional tree_mask (N, N) bool (row i sees column j)
        -> guided logits (N, V) float32, conditional hidden (N, h) float32. Appends N scratch rows."""
        no_pending(state.pending)
        n = torch.as_tensor(tokens).numel()
        m = self.rows_for(n)                                  # compiled: padded, one shape per bucket
        toks = torch.zeros(m, dtype=torch.long, device=self.device)
        pos = torch.zeros(m, dtype=torch.long, device=self.device)
        toks[:n] = torch.as_tensor(tokens, device=self.device).long().view(-1)
        pos[:n] = torch.as_tensor(positions, device=self.device).long().view(-1)
        emb = self.model.prepare_embeddings_for_image_generation(toks.expand(state.rows, m))     # (rows, M, h)
        mask = self._mask(state, n, m, tree_mask, emb.dtype)
        out = self._lm(inputs_embeds=emb, attention_mask=mask, position_ids=(state.prefix + pos).expand(state.rows, m),
                       cache=state.cache, use_cache=True)
        state.pending = n
        return self._mix(out.last_hidden_state[:, :n], state)

    @torch.inference_mode()
    def commit(self, state: JanusState, kept: torch.Tensor) -> None:
        """Keep the scratch rows `kept` (indices into the last forward's tokens, a path in order), drop the rest."""
        kept = kept_rows(kept, state.pending)
        t, k = state.length, kept.numel()
        compact_path(((layer.keys, layer.values) for layer in state.cache.layers), t, kept, self.device)
        for layer in state.cache.layers:                                         # the length reset: no crop
            layer.cumulative_length.fill_(t + k)
        state.length, state.pending = t + k, 0

    def _mask(self, state: JanusState, n: int, m: int, tree_mask, dtype: torch.dtype) -> torch.Tensor:
        """The (rows, 1, M, capacity) additive mask of a forward of n tokens padded to m: the committed prefix is
        visible to every node, a chain is causal, a tree node sees its ancestors and itself."""
        if tree_mask is None:
            inner = torch.ones(n, n, dtype=torch.bool, device=self.device).tril()
        else:                                                                    # a node always sees itself
            inner = torch.as_tensor(tree_mask, device=self.device).bool() | torch.eye(n, dtype=torch.bool,
                                                                                        device=self.device)
        cap = state.cache.layers[0].max_cache_len
        seen = static_mask(inner.new_ones(state.length), padded_inner(inner, m), cap)
        return additive(seen, dtype).expand(state.rows, 1, m, cap)

    def _mix(self, h: torch.Tensor, state: JanusState) -> tuple[torch.Tensor, torch.Tensor]:
        """h (rows, N, hidden) -> guided logits (N, V) float32 and the conditional hidden (N, h) float32."""
        logits = self.head(h).float()                                            # (rows, N, V)
        return guide(logits, state.rows, state.cfg_scale), h[0].float()

    # -- extras for drafters, rules and rendering -------------------------------------------------------------------
    def code_vectors(self) -> torch.Tensor:
        """(V, d) float32 VQ codebook, l2-normalised as `get_codebook_entry` feeds the decoder."""
        w = self.model.model.vqmodel.quantize.embedding.weight.detach().float()
        return F.normalize(w, p=2, dim=-1)

    @torch.inference_mode()
    def embed_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        """(N,) codes -> (N, h) float32: the generation embeddings + aligner the target itself is fed."""
        tokens = torch.as_tensor(tokens, device=self.device).long()
        return self.model.prepare_embeddings_for_image_generation(tokens).float()

    @torch.inference_mode()
    def output_head(self, hidden: torch.Tensor) -> torch.Tensor:
        """(..., h) -> (..., V) float32 through the frozen `generation_head` (no CFG mixing)."""
        return self.head(hidden.to(self.device, self.dtype)).float()

    @torch.inference_mode()
    def decode_image(self, tokens: torch.Tensor) -> Image.Image:
        """(H*W,) codes in raster order -> RGB image; [-1, 1] -> uint8 as the original repo maps it."""
        codes = torch.as_tensor(tokens, device=self.device).long().view(1, -1)
        pixels = self.model.decode_image_tokens(codes)[0].float()                 # (H, W, 3) in about [-1, 1]
        img = ((pixels + 1) / 2 * 255).clamp(0, 255).round().to(torch.uint8)
        return Image.fromarray(img.cpu().numpy())


# -- loading ----------------------------------------------------------------------------------------------------------
def _offline() -> bool:
    """HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE, read at call time (not only at import)."""
    return any(os.environ.get(k, "").upper() in _TRUE for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _missing(model: str, why: str, cause: Exception | None = None) -> FileNotFoundError:
    """One clear error naming the three ways out."""
    detail = f" ({type(cause).__name__}: {str(cause).splitlines()[0][:200]})" if cause else ""
    return FileNotFoundError(
        f"Janus checkpoint {model!r} is not available: {why}{detail}. Options: use the embedded model "
        "(--model scenes); pass a local checkpoint directory (--model PATH with config.json, model.safetensors, "
        "tokenizer and processor files, as written by save_pretrained); or allow network access (unset "
        "HF_HUB_OFFLINE) so a hub id such as deepseek-community/Janus-Pro-1B can be downloaded.")


def _looks_local(model: str) -> bool:
    """A path rather than a hub id ('owner/name'): explicit path syntax, more than one '/', or it exists."""
    return model.startswith((".", "/", "~")) or model.count("/") > 1 or Path(model).exists()


def load_janus(model: str, device: str | torch.device = "auto", dtype=None) -> JanusModel:
    """Load a transformers-native Janus checkpoint (hub id or local directory) behind the model boundary.

    Never trusts remote code and reads safetensors only. Original `deepseek-ai/Janus*` repos (remote code) are not
    loadable; use their `deepseek-community/*` conversions."""
    from transformers import AutoProcessor, JanusForConditionalGeneration  # needed only by this backend
    dev, dt = pick_device(device, dtype)
    offline = _offline()
    local = _looks_local(model)
    src = str(Path(model).expanduser()) if local else model
    if local and not Path(src).is_dir():
        raise _missing(model, f"there is no directory {src}")
    if local and not ((Path(src) / "config.json").is_file() and any(Path(src).glob("*.safetensors"))):
        raise _missing(model, f"{src} is not a complete checkpoint directory (config.json, *.safetensors)")
    kw = dict(local_files_only=offline, trust_remote_code=False)
    try:
        processor = AutoProcessor.from_pretrained(src, **kw)
        net = JanusForConditionalGeneration.from_pretrained(src, dtype=dt, use_safetensors=True,
                                                            attn_implementation="sdpa", **kw)
    except OSError as e:
        why = (f"{src} is not a complete checkpoint directory" if local
               else "HF_HUB_OFFLINE is set and it is not in the local Hugging Face cache" if offline
               else "it is neither a local checkpoint directory nor a downloadable hub id")
        raise _missing(model, why, e) from e
    return JanusModel(net.to(dev).eval(), processor, name=model)
