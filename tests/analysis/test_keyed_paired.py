"""The paired comparison against AR under the same keyed noise (analysis/paired.py) and the "changed vs AR" map
(render/panels.py), tested against the two traces they compare."""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

from specviz.analysis import paired
from specviz.analysis.cards import cards
from specviz.render import draw, panels
from tests.support.toy import run, toy

KW = dict(prompt="red house", noise="keyed")
CSD = dict(method="csd", window=4, lam=2.0, delta=1.0)


@pytest.fixture(scope="module")
def runs():
    return _runs()


@lru_cache(maxsize=1)
def _runs():
    model, factory = toy(codes=5, grid=3, sharpen=0.5)
    def differs(s):
        return run(model, factory, seed=s, **KW, **CSD).tokens != run(model, factory, seed=s, method="ar", **KW).tokens
    seed = next(s for s in range(20) if differs(s))
    out = {m: run(model, factory, seed=seed, **KW, **kw) for m, kw in
           {"ar": dict(method="ar"), "sjd": dict(method="sjd", window=4), "csd": CSD}.items()}
    return model, out


def image(model, trace):
    return np.asarray(model.decode_image(trace.tokens))


def test_paired_measures_against_the_two_traces(runs):
    model, t = runs
    ar, csd = t["ar"], t["csd"]
    want = [i for i in range(len(ar.tokens)) if ar.tokens[i] != csd.tokens[i]]
    got = paired.compare(csd, ar, image(model, csd), image(model, ar))
    assert list(got.changed) == want and got.count == len(want) > 0
    assert got.first == want[0] and list(got.downstream) == want[1:]
    a, b = image(model, csd).astype(float), image(model, ar).astype(float)
    mse = ((a - b) ** 2).mean()
    assert got.psnr == pytest.approx(10 * math.log10(255 ** 2 / mse)) and got.mean_abs == pytest.approx(
        np.abs(a - b).mean())
    same = paired.compare(t["sjd"], ar, image(model, t["sjd"]), image(model, ar))
    assert same.identical and same.first is None and same.psnr == math.inf and same.mean_abs == 0.0


def test_pixel_diff_by_hand():
    a = np.zeros((2, 2, 3), np.uint8)
    b = a.copy()
    b[0, 0, 0] = 255                                   # one channel of one pixel: mse = 255² / 12
    psnr, mad = paired.pixel_diff(b, a)
    assert psnr == pytest.approx(10 * math.log10(12)) and mad == pytest.approx(255 / 12)


def test_only_runs_that_share_the_noise_are_compared(runs):
    model, t = runs
    factory = toy(codes=5, grid=3, sharpen=0.5)[1]
    papers = run(model, factory, seed=0, prompt="red house", method="sjd", window=4)
    assert "papers' noise" in paired.comparable(papers, t["ar"])
    other = run(model, factory, seed=t["ar"].config["seed"] + 1, **KW, method="sjd", window=4)
    assert "seed" in paired.comparable(other, t["ar"])
    with pytest.raises(ValueError):
        paired.compare(papers, t["ar"])


def test_changed_map_categories():
    _, t = _runs()
    cat = paired.changed_category(t["csd"], t["ar"]).ravel()
    changed = paired.compare(t["csd"], t["ar"]).changed
    assert cat[changed[0]] == paired.FIRST
    assert all(cat[p] == paired.DOWNSTREAM for p in changed[1:])
    assert all(cat[p] == paired.SAME for p in range(len(cat)) if p not in changed)
    assert (paired.changed_category(t["sjd"], t["ar"]) == paired.SAME).all()


def test_changed_map_is_drawn_in_its_colours(runs):
    """The panel of each compared method paints each cell in its category's colour; AR gets no panel."""
    _, t = runs
    shown, why = panels._changed_layout(t)
    assert shown == ["sjd", "csd"] and why == ""
    got, side = panels._changed_panels(t)
    assert side is not None
    for m, im in got:
        cat = paired.changed_category(t[m], t["ar"])
        c = draw.cell_px(t[m].grid, draw.PANEL)
        arr = np.asarray(im)
        for (r, col), v in np.ndenumerate(cat):
            assert tuple(arr[r * c + c // 2, col * c + c // 2]) == draw.CHANGED_RGB[int(v)]
    full = panels.heatmap("changed", t, {}, cards=cards())
    assert full.size[0] > 2 * draw.PANEL


def test_changed_map_says_why_when_nothing_compares(runs):
    _, t = runs
    shown, why = panels._changed_layout({"sjd": t["sjd"], "csd": t["csd"]})
    assert shown == ["sjd", "csd"] and "add AR" in why
    got, _ = panels._changed_panels({"sjd": t["sjd"], "csd": t["csd"]})
    assert all((np.asarray(im) == draw.NAN_RGB).all() for _, im in got)
