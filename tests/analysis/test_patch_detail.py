"""Patch detail has one definition (specviz/core/detail.py): its values, its edges (the terciles of VQ round-trips of
real scenes), and every report that bins by it — the atlas, the bench's relaxed_low_mid / low_mid, the scenes model
card's ambiguity table — puts the same image's patches in the same classes; no second definition in the source."""
import ast
import functools
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from specviz.analysis import atlas, quality
from specviz.core import detail
from specviz.scenes import ambiguity
from tests.analysis.test_atlas import Textured
from tests.support.toy import run, toy

ROOT = Path(__file__).resolve().parents[2]
VQ = ROOT / "assets" / "vq.safetensors"
GRID = (8, 8)


@functools.lru_cache(maxsize=1)
def textured() -> np.ndarray:
    """A uint8 image of 8x8 patches of 4x4 pixels whose details fall in all three classes, edges included: noise
    of a per-patch amplitude, plus patches whose detail is exactly an edge (a checker of amplitude 2.5 or 4.5)."""
    rng = np.random.default_rng(0)
    amp = np.kron(rng.choice([0.0, 1.5, 3.0, 4.0, 6.0, 20.0], size=GRID), np.ones((4, 4)))
    img = 128 + amp[..., None] * rng.standard_normal((32, 32, 3))
    checker = np.indices((4, 4)).sum(0) % 2 * 2 - 1
    img[:4, :4] = 127.5 + 2.5 * checker[..., None]
    img[:4, 4:8] = 127.5 + 4.5 * checker[..., None]
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


def test_detail_values_and_edges():
    img = np.zeros((8, 8, 3), np.uint8)
    img[:4, :4] = 100                                                      # flat patch
    img[4:, 4:, 0] = np.array([[0, 255] * 2] * 4)                          # striped patch, one channel
    d = detail.patch_detail(img, (2, 2))
    assert d.shape == (2, 2) and d[0, 0] == 0 and d[0, 1] == 0 and d[1, 1] == pytest.approx(127.5 / 3)
    assert detail.DETAIL_CLASSES == ("low", "mid", "high")
    assert list(detail.detail_class([0.0, 2.49, 2.5, 4.49, 4.5, 30.0])) == [0, 0, 1, 1, 2, 2]
    assert list(detail.image_classes(textured(), GRID)[:2]) == [1, 2]      # the edge patches: the upper class


@pytest.mark.skipif(not VQ.exists(), reason="assets/vq.safetensors not trained")
def test_edges_are_the_terciles_of_vq_round_trips_of_real_scenes():
    """The stated reason for the edges: each class holds about a third of what the shipped tokenizer draws of
    training scenes (scripts/detail_edges.py: 0.318 / 0.351 / 0.331 on 600 scenes)."""
    from specviz.scenes import world
    from specviz.scenes.train import load_vq
    from specviz.scenes.vq import to_tensor, to_uint8
    imgs, _ = world.batch(np.random.default_rng(7), 60)
    vq = load_vq(VQ)
    with torch.no_grad():
        codes, _ = vq.encode(to_tensor(imgs))
        rec = to_uint8(vq.decode(codes)).numpy()
    cls = np.concatenate([detail.image_classes(r, tuple(codes.shape[1:])) for r in rec])
    shares = np.bincount(cls, minlength=3) / cls.size
    assert all(0.27 < s < 0.40 for s in shares), shares


class TexturedToy(Textured):
    """The toy target (8x8 grid) decoding every token sequence to the one textured image."""

    def decode_image(self, tokens):
        return Image.fromarray(textured())


@functools.lru_cache(maxsize=1)
def _toy():
    model, factory = toy(codes=8, grid=GRID[0])
    return TexturedToy(model), factory


def test_every_report_classes_an_image_alike():
    """The same image through the atlas, the bench's two columns and the model card's ambiguity table: the same
    classes (a report that binned by its own edges or its own std would disagree here)."""
    img, want = textured(), detail.image_classes(textured(), GRID)
    counts = np.bincount(want, minlength=3)
    assert all(counts > 0)
    low_mid = round(float((want < 2).mean()), 4)
    assert quality.low_mid(img[None], GRID) == low_mid
    every = [{"relaxed_positions": list(range(want.size))}]
    assert quality.relaxed_low_mid(img[None], every, GRID) == low_mid
    assert quality.relaxed_low_mid(img[None], [{"relaxed_positions": np.flatnonzero(want == 2).tolist()}], GRID) == 0
    model, factory = _toy()
    row = atlas.record(run(model.inner, factory, method="ar"), img) | {"prompt": "red house", "seed": 0}
    result = atlas.aggregate([row])
    assert result["detail_edges"] == list(detail.DETAIL_EDGES)
    assert result["binned"]["ar"]["detail"]["count"] == counts.tolist()
    assert result["headline"]["ar"]["low_detail_pct"] == pytest.approx(100 * counts[0] / want.size)
    card = ambiguity.measure(model, n=1)
    assert card["detail_edges"] == list(detail.DETAIL_EDGES)
    assert [card["per_detail_class"][c]["share"] for c in detail.DETAIL_CLASSES] == \
        [round(c / want.size, 4) for c in counts]


DEFINITION = re.compile(r"patch_(std|detail)|detail_(class|bin)|image_classes|DETAIL_(EDGES|BINS|CLASSES)$")


def test_one_definition_of_patch_detail_in_the_source():
    """No module but core/detail.py defines a patch-detail function or edges (imports of them are fine)."""
    found = []
    for path in sorted((ROOT / "specviz").rglob("*.py")) + sorted((ROOT / "scripts").glob("*.py")):
        if path == ROOT / "specviz" / "core" / "detail.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else \
                [t.id for t in getattr(node, "targets", [getattr(node, "target", None)]) if isinstance(t, ast.Name)] \
                if isinstance(node, (ast.Assign, ast.AnnAssign)) else []
            found += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names if DEFINITION.search(n)]
    assert not found, f"a second definition of patch detail: {found} (read specviz/core/detail.py instead)"
