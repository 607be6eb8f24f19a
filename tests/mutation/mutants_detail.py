"""Wrong variants of patch detail (specviz/core/detail.py): the two sets of edges the reports used before there was
one definition, a std pooled over the channels, and a report that bins by its own edges again."""
import numpy as np

from specviz.analysis import atlas, quality
from specviz.core import detail
from tests.analysis import test_patch_detail as D
from tests.support.mutants import Mutant


def _pooled_std(image, grid):
    """The std over all pixels and channels of the patch together (not per channel, averaged)."""
    gh, gw = grid
    h, w, c = image.shape
    return np.asarray(image, np.float64).reshape(gh, h // gh, gw, w // gw, c).std(axis=(1, 3, 4))


def _bench_own_classes(image, grid):
    """The bench's old definition: float32 std, hand-picked edges (4, 10)."""
    gh, gw = grid
    h, w, c = image.shape
    p = image.astype(np.float32).reshape(gh, h // gh, gw, w // gw, c).transpose(0, 2, 1, 3, 4)
    return np.digitize(p.reshape(gh, gw, -1, c).std(2).mean(-1), (4.0, 10.0)).reshape(-1)


VARIANTS = [
    Mutant("detail-edges-the-old-bench-hand-picked-4-10",
           lambda mp: mp.setattr(detail, "DETAIL_EDGES", (4.0, 10.0)),
           (D.test_detail_values_and_edges,)),
    Mutant("detail-edges-the-old-atlas-v1-terciles-3-6",
           lambda mp: mp.setattr(detail, "DETAIL_EDGES", (3.0, 6.0)),
           (D.test_detail_values_and_edges,)),
    Mutant("detail-edge-value-falls-in-the-lower-class",
           lambda mp: mp.setattr(detail, "detail_class", lambda d: np.searchsorted(
               detail.DETAIL_EDGES, np.asarray(d, np.float64), side="left")),
           (D.test_detail_values_and_edges,)),
    Mutant("detail-std-pooled-over-channels",
           lambda mp: mp.setattr(detail, "patch_detail", _pooled_std),
           (D.test_detail_values_and_edges,)),
    Mutant("bench-bins-by-its-own-edges-again",
           lambda mp: mp.setattr(quality, "image_classes", _bench_own_classes),
           (D.test_every_report_classes_an_image_alike,)),
    Mutant("atlas-bins-by-its-own-edges-again",
           lambda mp: mp.setattr(atlas, "detail_class", lambda d: np.searchsorted(
               (3.0, 6.0), np.asarray(d, float), side="right")),
           (D.test_every_report_classes_an_image_alike,)),
]
