"""A model's codes as pictures: the patch-drawing callable the draft tree picture and the Replay tab's drafts take
(render draws with it and never decodes itself)."""
from __future__ import annotations

from typing import Callable

import torch
from PIL import Image


def patches(model) -> Callable[[int], Image.Image]:
    """token -> the decoded patch of that code (the centre cell of an image made of that code alone), cached."""
    cache: dict[int, Image.Image] = {}
    gh, gw = model.grid

    def patch(token: int) -> Image.Image:
        if token not in cache:
            im = model.decode_image(torch.full((gh * gw,), int(token), dtype=torch.long)).convert("RGB")
            cw, ch = im.size[0] // gw, im.size[1] // gh
            cache[token] = im.crop((cw * (gw // 2), ch * (gh // 2), cw * (gw // 2 + 1), ch * (gh // 2 + 1)))
        return cache[token]
    return patch
