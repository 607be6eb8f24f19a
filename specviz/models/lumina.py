"""Lumina-mGPT (Chameleon architecture) behind the model boundary (models/base.py), driven by our own loop.

transformers' `ChameleonForConditionalGeneration` is used as a container: `model.model` (embeddings, decoder
layers, final norm) gives hidden states, `lm_head` the logits. Its own `forward` is never called (it masks every
image token out of the logits). Loading the release: models/lumina_load.py; the VQGAN decoder: chameleon_vq.py.

Sequence layout (Lumina-mGPT's item processor): the prompt, then the image header
`<racm3:break>` (begin of image), `<reserved{8800 + h_grids:05d}>`, `<reserved{8800 + w_grids:05d}>` (the
resolution tokens; one grid = 32 px = 2x2 codes), then the codes row by row with one end-of-line token
`<reserved08799>` after every row, then `<eoss>`. Our image positions 0..H*W-1 skip the EOL tokens: position p =
(r, c) sits at sequence position start + p + r. `forward` inserts an EOL right after every fed token that ends a row
(c = W-1, except the last row), as a child of that token in the tree; the token's logits and hidden are read at the
EOL (they are the law of the next image position), and `commit` keeps a kept token's EOL with it. The reference
forces the EOL by a logits processor; here it is never sampled, so it can never be rejected.

CFG as Lumina does it: the unconditional context is the image header alone (no BOS, no text) at positions 0, 1, 2;
guided = u + s (c - u) in float32. Here both rows share one static cache (a transformers StaticCache of
prompt + grid + EOLs + SCRATCH rows, models/base.py: forwards padded to bucket(rows), written by index copy, commit
by index copy and a length reset, never crop or cat): the uncond row is left-padded to the
cond prompt's length and the pad columns are masked out for every query; its positions are explicit. As the
reference's CFG processor, every scale but exactly 1.0 mixes (s < 1 too: s = 0 is the unconditional law, 0 < s < 1
a blend); at s = 1.0 only the conditional row runs (the reference returns the conditional scores unchanged).
Logits are restricted to the 8192 image tokens and reordered by VQ code (BPE id -> code by the IMGIMG token
names in config.vocabulary_map), as the reference's processor suppresses every other id inside an image.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
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
    static_mask,
)

TEMPLATE = "Generate an image of {w}x{h} according to the following prompt:\n{prompt}"
PX_PER_GRID = 32          # one resolution-token unit: 32 px = 2 x 2 codes of the 16x VQGAN


@dataclass
class LuminaState:
    cache: object               # StaticCache; rows (cond[, uncond]) x heads x capacity x dh per layer
    start: list                 # per row: sequence position of image position 0
    pad: int                    # left pad columns of the uncond row (masked for every query)
    length: int                 # committed cache rows (equal for all rows)
    cfg_scale: float
    rows: int
    pending: int = 0            # expanded scratch rows appended by the last forward
    expanded: list = field(default_factory=list)   # per fed token: its scratch row indices (token[, EOL])


class LuminaModel:
    """Model boundary over a loaded `ChameleonForConditionalGeneration` + the Chameleon VQGAN decoder."""

    def __init__(self, net, vq, ids: dict, img_bpe: torch.Tensor, grids: tuple[int, int], tokenizer=None,
                 name: str = "lumina"):
        self.net, self.vq, self.ids, self.tokenizer, self.name = net.eval(), vq.eval(), ids, tokenizer, name
        self.lm = net.model
        self.grids = grids
        self.grid = (2 * grids[0], 2 * grids[1])
        self.codebook_size = int(img_bpe.numel())
        self.hidden_size = net.config.hidden_size
        self.device = next(net.parameters()).device
        self.dtype = next(net.parameters()).dtype
        self.img_bpe = img_bpe.to(self.device)                               # (V,) code -> BPE id
        self._bpe = img_bpe.tolist()                                         # host copy: no device sync per token
        self.img_head = net.lm_head.weight.detach()[self.img_bpe]            # (V, h) image rows, code order
        if net.config._attn_implementation not in ("sdpa", "eager"):
            raise ValueError("tree verification needs a 4-D attention mask: use attn_implementation='sdpa'")
        self._lm = self.lm                                 # the verification forward: torch.compile'd by compile()
        self.compiled, self.rows_for = False, exact         # eager: forwards of their own row count

    def compile(self) -> "LuminaModel":
        """Capture the fixed-shape verification forward with torch.compile (base.compiled: refuses in one line)."""
        self._lm, self.compiled, self.rows_for = compiled(self.lm), True, bucket
        return self

    # -- prompts ---------------------------------------------------------------------------------------------------
    def header(self) -> list[int]:
        """Begin-of-image and the two resolution tokens (height grids, then width grids)."""
        return [self.ids["boi"], self.ids["res0"] + self.grids[0], self.ids["res0"] + self.grids[1]]

    def encode_prompt(self, prompt: str | list[int]) -> list[int]:
        """Text -> BOS + the Lumina-mGPT generation template + the turn separator; a list of ids passes through."""
        if not isinstance(prompt, str):
            return [int(t) for t in torch.as_tensor(prompt).view(-1).tolist()]
        if self.tokenizer is None:
            raise ValueError("this Lumina-mGPT checkpoint has no tokenizer files: pass prompt token ids instead")
        h, w = (g * PX_PER_GRID for g in self.grids)
        text = TEMPLATE.format(w=w, h=h, prompt=prompt) + self.ids["sep_text"]
        return [self.ids["bos"]] + list(self.tokenizer.encode(text, add_special_tokens=False))

    # -- boundary ---------------------------------------------------------------------------------------------------
    @torch.inference_mode()
    def prefill(self, prompt: str | list[int], cfg_scale: float) -> Prefilled:
        # transformers (slow to import) only when Lumina-mGPT runs
        from transformers import StaticCache
        cond = self.encode_prompt(prompt) + self.header()
        n, rows = len(cond), 1 if cfg_scale == 1.0 else 2            # the reference: == 1.0 skips CFG
        pad = n - 3
        ids = torch.tensor([cond, [self.ids["boi"]] * pad + self.header()][:rows], device=self.device)
        pos = torch.stack([torch.arange(n), (torch.arange(n) - pad).clamp(min=0)])[:rows].to(self.device)
        causal = torch.ones(n, n, dtype=torch.bool, device=self.device).tril()
        seen = causal.expand(rows, n, n).clone()
        if rows == 2:
            seen[1, :, :pad] = False
            seen[1] |= torch.eye(n, dtype=torch.bool, device=self.device)    # pad queries see themselves only
        h, w = self.grid
        cap = n + h * w + h + SCRATCH                                   # prompt, codes, EOLs, scratch
        cache = StaticCache(config=self.net.config, max_cache_len=cap)
        seen = static_mask(seen.new_zeros(rows, 0), seen, cap)
        out = self.lm(inputs_embeds=self.lm.embed_tokens(ids), attention_mask=self._additive(seen),
                      position_ids=pos, cache=cache, use_cache=True)
        state = LuminaState(cache, [n, 3][:rows], pad if rows == 2 else 0, n, float(cfg_scale), rows)
        logits, hidden = self._mix(out.last_hidden_state[:, -1:], state)
        return Prefilled(state, logits[0], hidden[0])

    @torch.inference_mode()
    def forward(self, state: LuminaState, tokens: torch.Tensor, positions: torch.Tensor,
                tree_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """tokens (N,) codes at image positions (N,), optional tree_mask (N, N) bool -> guided logits (N, V) float32,
        conditional hidden (N, h) float32. Appends the scratch rows (tokens plus inserted EOLs)."""
        no_pending(state.pending)
        tokens = torch.as_tensor(tokens).long().view(-1).cpu()
        positions = torch.as_tensor(positions).long().view(-1).cpu()
        n = tokens.numel()
        anc = (torch.ones(n, n, dtype=torch.bool).tril() if tree_mask is None
               else torch.as_tensor(tree_mask).bool().cpu()) | torch.eye(n, dtype=torch.bool)
        h, w = self.grid
        orig, eol, offs, ids, expanded = [], [], [], [], []
        for i, (t, p) in enumerate(zip(tokens.tolist(), positions.tolist())):
            if not 0 <= p < h * w:
                raise IndexError(f"image position {p} outside the {h}x{w} grid")
            rows_i = [len(orig)]
            orig.append(i), eol.append(False), offs.append(p + p // w), ids.append(self._bpe[t])
            if p % w == w - 1 and p < h * w - 1:                              # row end: the EOL follows
                rows_i.append(len(orig))
                orig.append(i), eol.append(True), offs.append(p + p // w + 1), ids.append(self.ids["eol"])
            expanded.append(rows_i)
        o, e = torch.tensor(orig), torch.tensor(eol)
        same = o[:, None] == o[None, :]
        inner = anc[o][:, o] & ~(e[None, :] & same & ~e[:, None])      # a token's EOL is seen by its descendants
        m = len(orig)
        size = self.rows_for(m)                               # compiled: padded, one shape per bucket
        prefix = torch.ones(state.rows, state.length, dtype=torch.bool)
        prefix[1:, :state.pad] = False                                  # the uncond row's pad columns
        seen = static_mask(prefix, padded_inner(inner, size), state.cache.layers[0].max_cache_len)
        ids += [self.ids["eol"]] * (size - m)
        offs += [0] * (size - m)
        ids_t = torch.tensor(ids, device=self.device).expand(state.rows, size)
        pos = torch.tensor([[s + x for x in offs] for s in state.start], device=self.device)
        out = self._lm(inputs_embeds=self.lm.embed_tokens(ids_t), attention_mask=self._additive(seen),
                       position_ids=pos, cache=state.cache, use_cache=True)
        state.pending, state.expanded = m, expanded
        pick = torch.tensor([r[-1] for r in expanded], device=self.device)  # the row that holds the next law
        return self._mix(out.last_hidden_state[:, pick], state)

    @torch.inference_mode()
    def commit(self, state: LuminaState, kept: torch.Tensor) -> None:
        """Keep the scratch rows of the fed tokens `kept` (a path, in order) and their EOLs; drop the rest."""
        kept = kept_rows(kept, len(state.expanded)).tolist()                    # indices into the fed tokens
        t = state.length
        rows = [r for k in kept for r in state.expanded[k]]
        k = len(rows)
        compact_path(((layer.keys, layer.values) for layer in state.cache.layers), t,
                     torch.tensor(rows, dtype=torch.long), self.device)
        for layer in state.cache.layers:                                         # the length reset: no crop
            layer.cumulative_length.fill_(t + k)
        state.length, state.pending, state.expanded = t + k, 0, []

    def _additive(self, seen: torch.Tensor) -> torch.Tensor:
        """(rows, Q, K) bool -> (rows, 1, Q, K) additive float mask in the model's dtype."""
        return additive(seen.to(self.device), self.dtype)[:, None]

    def _mix(self, h: torch.Tensor, state: LuminaState) -> tuple[torch.Tensor, torch.Tensor]:
        """h (rows, N, hidden) -> guided image-code logits (N, V) float32, conditional hidden (N, h) float32."""
        logits = (h @ self.img_head.T).float()
        guided = guide(logits, state.rows, state.cfg_scale)
        return guided, h[0].float()

    # -- extras for drafters, rules and rendering -------------------------------------------------------------------
    def code_vectors(self) -> torch.Tensor:
        """(V, d) float32: the VQGAN codebook as the decoder reads it (raw, not normalised)."""
        return self.vq.quantize.embedding.weight.detach().float()

    @torch.inference_mode()
    def embed_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        tokens = torch.as_tensor(tokens, device=self.device).long()
        return self.lm.embed_tokens(self.img_bpe[tokens]).float()

    @torch.inference_mode()
    def output_head(self, hidden: torch.Tensor) -> torch.Tensor:
        """(..., h) -> (..., V) float32: lm_head's image rows in code order (no CFG mixing)."""
        return (hidden.to(self.device, self.dtype) @ self.img_head.T).float()

    @torch.inference_mode()
    def decode_pixels(self, tokens: torch.Tensor) -> torch.Tensor:
        """(H*W,) codes -> (3, H', W') float32 decoder output (about [-1, 1])."""
        codes = torch.as_tensor(tokens, device=self.vq.quantize.embedding.weight.device).long()
        return self.vq(codes.view(1, *self.grid))[0].float()

    def decode_image(self, tokens: torch.Tensor) -> Image.Image:
        """(H*W,) codes in raster order -> RGB image, mapped as the reference does: clamp, (x + 1) / 2, x 255,
        truncated to uint8."""
        x = (self.decode_pixels(tokens).clamp(-1, 1) + 1) / 2
        img = (x.permute(1, 2, 0) * 255).to(torch.uint8)
        return Image.fromarray(img.cpu().numpy())
