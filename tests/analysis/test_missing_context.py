"""The missing-context map (analysis/context.py, the map `missing`): against the hand-computed ZipAR schedule on a
4 x 6 grid at w = 2, 0 everywhere for every raster method (chains and trees whose runs cross rows), against a
brute-force count for pjd, and the active rows per step."""
from __future__ import annotations

import numpy as np
import pytest

from specviz.analysis import context, views
from tests.engine.test_zipar import Regrid, _run
from tests.support.toy import run, toy

# ZipAR, 4 x 6, w = 2: row 0 at forwards 0..5, row 1 column c at 6 + c, row 2 at 8 + c, row 3 at 10 + c. Cell (2, c)
# lacks row 1's columns c + 2 .. 5; cell (3, c) lacks row 1's columns c + 4 .. 5 and row 2's c + 2 .. 5.
ZIPAR_4X6_W2 = np.array([[0, 0, 0, 0, 0, 0],
                         [0, 0, 0, 0, 0, 0],
                         [4, 3, 2, 1, 0, 0],
                         [6, 4, 2, 1, 0, 0]], float)
ZIPAR_4X6_W2_ROWS = [1] * 8 + [2, 2, 3, 3, 2, 2, 1, 1]


def test_zipar_against_the_hand_computed_schedule():
    trace = _run(Regrid(4, 6), method="zipar", zipar_w=2)
    assert np.array_equal(context.missing_context(trace), ZIPAR_4X6_W2)
    assert context.active_rows(trace) == ZIPAR_4X6_W2_ROWS
    assert np.array_equal(views.MAPS["missing"].compute(trace, {}), ZIPAR_4X6_W2)


@pytest.fixture(scope="module")
def tiny_toy():
    return toy(codes=6, grid=4)


@pytest.mark.parametrize("kw", [dict(method="ar"), dict(method="sjd", window=6), dict(method="mcsjd", window=6),
                                dict(method="csd", lam=2.0, window=6), dict(method="gsd", window=6),
                                dict(method="sd"), dict(method="sd", tree="static"), dict(method="cascade"),
                                dict(method="lantern"), dict(method="sjdpac", window=16),
                                dict(method="pjd", pjd_c=4, window=6), dict(method="zipar", zipar_w=4)],
                         ids=lambda kw: "-".join(str(v) for v in kw.values()))
@pytest.mark.parametrize("noise", ["papers", "keyed"])
def test_zero_for_every_raster_method(tiny_toy, kw, noise):
    """Raster methods (and the wavefront ones with rows in turn) commit each token with its whole raster past."""
    trace = run(*tiny_toy, noise=noise, seed=5, **kw)
    crosses = any(len({ev.pos // 4 for ev in st.events if ev.commits}) > 1 for st in trace.steps)
    assert np.array_equal(context.missing_context(trace), np.zeros((4, 4)))
    if kw["method"] in ("sjd", "sjdpac"):
        assert crosses                     # a step whose committed run crosses a row end: not vacuous


def _brute(trace, w):
    """What a pjd token saw: positions committed in earlier steps, and its own row's earlier tokens committed in the
    same step (its chain); the raster-earlier rest is missing."""
    done = {p: s for p, (s, _) in trace.committing().items()}
    out = np.zeros(len(done))
    for p, s in done.items():
        out[p] = sum(1 for j in range(p) if done[j] > s or (done[j] == s and j // w != p // w))
    return out.reshape(-1, w)


@pytest.mark.parametrize("c,window,seed", [(1, 3, 0), (2, 4, 2), (3, 3, 1)])
def test_pjd_against_a_brute_force_count(c, window, seed):
    trace = _run(Regrid(4, 6), method="pjd", pjd_c=c, window=window, seed=seed)
    got = context.missing_context(trace)
    assert np.array_equal(got, _brute(trace, 6)) and got.sum() > 0
    rows = context.active_rows(trace)
    assert max(rows) >= 2 and len(rows) == len(trace.steps)


@pytest.mark.parametrize("kw", [dict(method="zipar", zipar_w=2), dict(method="pjd", pjd_c=2, window=4, seed=2),
                                dict(method="pjd", pjd_c=1, window=3, seed=0), dict(method="sjd", window=6)],
                         ids=lambda kw: "-".join(str(v) for v in kw.values()))
def test_what_each_token_saw_agrees_with_the_map(kw):
    """context.seen (the inspector's sentence) counts the positions the map counts, at every cell; its rows are
    the token's raster past (rows 0..row, the token's own row before its column) and a subset of it."""
    trace = _run(Regrid(4, 6), **kw)
    got = context.missing_context(trace)
    for pos in range(24):
        s = context.seen(trace, pos)
        assert s.missing == got.flat[pos] and (s.row, s.col) == divmod(pos, 6), (pos, s)
        assert len(s.rows) == s.row + 1 and all(c < (6 if i < s.row else s.col) for i, r in enumerate(s.rows)
                                                for c in r), (pos, s)
        assert s.missing == pos - sum(len(r) for r in s.rows), (pos, s)
    assert context.out_of_raster(trace) == (kw["method"] != "sjd")
