"""Patch detail: how textured the image patch under one grid position is — the one definition every report bins by
(the atlas's detail bins, the bench's relaxed_low_mid / low_mid, the scenes model card's ambiguity table, the peek).

detail = the pixel standard deviation of the patch, per RGB channel over the patch's pixels, averaged over the
channels, in uint8 levels (a flat coloured patch scores 0). Classes: low < DETAIL_EDGES[0] <= mid < DETAIL_EDGES[1]
<= high. The edges are the terciles, rounded to half a level, of the detail of VQ round-trips of real `scenes`
images (the tokenizer's view of the training world, as every report measures decoded images): on 600 training
scenes through the shipped v2 tokenizer the terciles are 2.56 and 4.48 (`python scripts/detail_edges.py`; 2.52 and
4.43 with --seed 1), so a third of what the tokenizer can draw falls in each class. Generated images are a little
more detailed (AR's images on `scenes`: 28 / 35 / 37 %, docs/atlas.md).
"""
from __future__ import annotations

import numpy as np

DETAIL_EDGES = (2.5, 4.5)
DETAIL_CLASSES = ("low", "mid", "high")


def patch_detail(image: np.ndarray, grid) -> np.ndarray:
    """uint8 image (gh*ph, gw*pw, 3) -> (gh, gw) float64 detail of each grid cell's patch."""
    gh, gw = grid
    h, w, c = image.shape
    cells = np.asarray(image, np.float64).reshape(gh, h // gh, gw, w // gw, c)
    return cells.std(axis=(1, 3)).mean(-1)


def detail_class(detail) -> np.ndarray:
    """Detail (any shape) -> 0 (low), 1 (mid), 2 (high) by DETAIL_EDGES; an edge value falls in the upper class."""
    return np.searchsorted(DETAIL_EDGES, np.asarray(detail, np.float64), side="right")


def image_classes(image: np.ndarray, grid) -> np.ndarray:
    """(gh*gw,) detail class of each grid position of a uint8 image, in raster order."""
    return detail_class(patch_detail(image, grid)).reshape(-1)
