"""Region masks of the world and the region head: the masked render is the world's own render, the masks are
where the layers are, and the shipped head meets its accuracy on fresh held-out scenes."""
import json
from pathlib import Path

import numpy as np
import pytest

from specviz.scenes import data, world
from specviz.scenes import regions as R

ASSETS = Path(__file__).resolve().parents[2] / "assets"


def test_render_with_regions_is_the_world_render_and_its_layers():
    for seed in range(12):
        s = data.random_scene(np.random.default_rng(seed), held_out=seed % 2 == 0)
        img, reg = R.render_with_regions(s, np.random.default_rng(100 + seed))
        assert (img == world.render(s, np.random.default_rng(100 + seed))).all()
        other = data.Scene(s.sky, s.ground, s.object, (s.colour + 1) % 6, s.position)
        recoloured = (world.render(other, np.random.default_rng(100 + seed)) != img).any(-1)
        assert recoloured.any() and (reg[recoloured] == R.OBJECT).all()      # the object's body is in the mask
        assert recoloured[reg == R.OBJECT].mean() > 0.3                       # and the mask is mostly body
        hz = int(np.argmax((reg == R.GROUND).any(1)))                          # sky above the horizon, ground below
        assert (reg[:hz] != R.GROUND).all() and (reg[hz:] != R.SKY).all() and 37 <= hz <= 43
        assert R.OBJECT in reg


def test_token_regions_majority_with_ties_to_the_higher_class():
    px = np.zeros((8, 8), int)
    px[:2, :4] = R.OBJECT                       # 8 of 16: tie object / sky -> object
    px[4:, 4:] = R.GROUND
    px[4, 4] = R.SKY                            # 15 ground, 1 sky -> ground
    np.testing.assert_array_equal(R.token_regions(px), [[R.OBJECT, R.SKY], [R.SKY, R.GROUND]])


@pytest.mark.skipif(not (ASSETS / "regions.safetensors").exists(), reason="region head not trained")
def test_region_head_accuracy_on_fresh_held_out_scenes():
    from specviz.scenes.train import load_vq
    report = json.loads((ASSETS / "regions.json").read_text())
    assert report["held_out"]["accuracy"] >= 0.95
    x, y = R.real_set(load_vq(), 48, seed=4242, held_out=True)           # scenes the head never saw
    acc = R.accuracy(R.load_head(), x, y)
    assert acc["accuracy"] >= 0.95, acc
