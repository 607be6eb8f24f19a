"""The Chameleon VQGAN decoder (Lumina-mGPT's image tokenizer; transformers ships only its encoder), our own module.

Released as Meta's `vqgan.ckpt` (a Lightning pickle whose "state_dict" holds encoder, decoder, quantizer and loss
weights) plus `vqgan.yaml` (taming-transformers `model.params`: embed_dim, n_embed, ddconfig). `convert_vqgan`
is read once by `specviz convert lumina-vqgan` (models/convert.py) and written as safetensors
(`vqgan.safetensors`: quantize.embedding, post_quant_conv, decoder.*) plus the parameters (`vqgan.json`); the app
and CLI only ever read those two files (`load_vqgan`).

Architecture (taming-transformers decoder, parameter names as in the checkpoint): codes -> embedding (n_embed x
embed_dim, used raw: no l2 normalisation) -> post_quant_conv (1x1, embed_dim -> z_channels) -> conv_in -> mid
(ResBlock, self-attention, ResBlock) -> up levels from the coarsest (num_res_blocks + 1 ResBlocks each, attention
where the resolution is in attn_resolutions, nearest x2 + conv between levels) -> GroupNorm(32) -> swish -> conv_out.
GroupNorm eps 1e-6, swish = x * sigmoid(x). Pixels come out in about [-1, 1].
"""
from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn as nn

from specviz.models.vq_blocks import Attn, ResBlock, Upsample, norm, swish

KEEP = ("quantize.embedding.", "post_quant_conv.", "decoder.")      # what decoding reads
DROP = ("encoder.", "quant_conv.", "loss.")                         # present in the release, unused here
DD_KEYS = ("z_channels", "out_ch", "ch", "ch_mult", "num_res_blocks", "attn_resolutions", "resolution")


class Decoder(nn.Module):
    def __init__(self, ch: int, out_ch: int, ch_mult, num_res_blocks: int, attn_resolutions, z_channels: int,
                 resolution: int):
        super().__init__()
        levels = len(ch_mult)
        cin = ch * ch_mult[-1]
        res = resolution // 2 ** (levels - 1)
        self.conv_in = nn.Conv2d(z_channels, cin, 3, padding=1)
        self.mid = nn.Module()
        self.mid.block_1, self.mid.attn_1, self.mid.block_2 = ResBlock(cin, cin), Attn(cin), ResBlock(cin, cin)
        ups = []
        for lvl in reversed(range(levels)):                       # coarsest first; stored finest first
            up = nn.Module()
            up.block, up.attn = nn.ModuleList(), nn.ModuleList()
            for _ in range(num_res_blocks + 1):
                up.block.append(ResBlock(cin, ch * ch_mult[lvl]))
                cin = ch * ch_mult[lvl]
                if res in attn_resolutions:
                    up.attn.append(Attn(cin))
            if lvl:
                up.upsample = Upsample(cin)
                res *= 2
            ups.insert(0, up)
        self.up = nn.ModuleList(ups)
        self.norm_out, self.conv_out = norm(cin), nn.Conv2d(cin, out_ch, 3, padding=1)

    def forward(self, z):
        h = self.mid.block_2(self.mid.attn_1(self.mid.block_1(self.conv_in(z))))
        for lvl in reversed(range(len(self.up))):
            up = self.up[lvl]
            for i, block in enumerate(up.block):
                h = block(h)
                if len(up.attn):
                    h = up.attn[i](h)
            if lvl:
                h = up.upsample(h)
        return self.conv_out(swish(self.norm_out(h)))


class ChameleonVQDecoder(nn.Module):
    """codes (B, H, W) -> pixels (B, 3, 16H, 16W) at the released config (2^(len(ch_mult)-1) per code)."""

    def __init__(self, params: dict):
        super().__init__()
        dd = params["ddconfig"]
        self.params = params
        self.quantize = nn.Module()
        self.quantize.embedding = nn.Embedding(params["n_embed"], params["embed_dim"])
        self.post_quant_conv = nn.Conv2d(params["embed_dim"], dd["z_channels"], 1)
        self.decoder = Decoder(dd["ch"], dd["out_ch"], dd["ch_mult"], dd["num_res_blocks"],
                               dd.get("attn_resolutions") or [], dd["z_channels"], dd["resolution"])

    @property
    def factor(self) -> int:
        return 2 ** (len(self.params["ddconfig"]["ch_mult"]) - 1)

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        z = self.quantize.embedding(codes).permute(0, 3, 1, 2)   # (B, embed_dim, H, W)
        return self.decoder(self.post_quant_conv(z))


# -- files -----------------------------------------------------------------------------------------------------------
def params_from_yaml(path) -> dict:
    """vqgan.yaml -> {"embed_dim", "n_embed", "ddconfig": {...}} (the taming `model.params`, loss config dropped)."""
    # PyYAML only for converting a released VQGAN config
    import yaml
    try:
        cfg = yaml.safe_load(Path(path).read_text())
        p = cfg["model"]["params"]
        dd = {k: p["ddconfig"][k] for k in DD_KEYS}
        return {"embed_dim": int(p["embed_dim"]), "n_embed": int(p["n_embed"]), "ddconfig": dd}
    except (OSError, KeyError, TypeError, yaml.YAMLError) as e:
        raise ValueError(f"{path} is not a Chameleon vqgan.yaml (model.params with embed_dim, n_embed and ddconfig "
                         f"{', '.join(DD_KEYS)}): {type(e).__name__}: {e}") from None


def check_state(sd: dict, params: dict, where: str) -> None:
    """Keys and shapes against the decoder built from `params`: one clear error naming what is wrong."""
    want = _shapes(params)
    missing = sorted(set(want) - set(sd))
    extra = sorted(set(sd) - set(want))
    if missing:
        raise ValueError(f"{where}: {len(missing)} VQGAN weight(s) missing, e.g. {missing[0]!r}")
    if extra:
        raise ValueError(f"{where}: {len(extra)} unexpected VQGAN weight(s), e.g. {extra[0]!r}")
    for k, shape in want.items():
        if tuple(sd[k].shape) != shape:
            raise ValueError(f"{where}: VQGAN weight {k!r} has shape {tuple(sd[k].shape)}, expected {shape}")


def _shapes(params: dict) -> dict:
    with torch.device("meta"):
        return {k: tuple(v.shape) for k, v in ChameleonVQDecoder(params).state_dict().items()}


def load_vqgan(folder, device="cpu") -> ChameleonVQDecoder:
    """folder/vqgan.safetensors + folder/vqgan.json (written by convert.convert_vqgan) -> float32 decoder, eval."""
    # on demand: only when a Lumina-mGPT VQGAN is loaded
    from safetensors.torch import load_file
    folder = Path(folder)
    st, js = folder / "vqgan.safetensors", folder / "vqgan.json"
    if not (st.is_file() and js.is_file()):
        raise FileNotFoundError(
            f"{folder} has no converted VQGAN (vqgan.safetensors + vqgan.json); convert Meta's Chameleon tokenizer "
            f"once with convert_vqgan(vqgan.ckpt, vqgan.yaml, {folder}) (docs/gpu.md, Lumina-mGPT)")
    params = json.loads(js.read_text())
    sd = load_file(str(st))
    check_state(sd, params, str(st))
    with torch.device("meta"):
        dec = ChameleonVQDecoder(params)
    dec.load_state_dict(sd, assign=True)
    return dec.float().to(device).eval()
