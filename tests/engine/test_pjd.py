"""PJD (engine/pjd.py): with c >= W (rows in turn) it equals SJD token for token under keyed noise; its traces pass
the structural and method checks; rows overlap (fewer forwards than SJD per row) and a row never overtakes the one
above; and its per-row verification is exact given its context: on a toy whose law reads only the token's own row
(tests/support/rowtoy.py), pjd's and zipar's output laws equal AR's (chi-square against the enumerated law), while
the same test rejects pjd on a toy whose law also reads the row above (missing context matters there)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from specviz.core.checks import check_structure
from specviz.engine import pjd
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from specviz.engine.validate import check_method
from tests.engine.test_exactness import chi2_pvalue
from tests.engine.test_zipar import Regrid
from tests.support.rowtoy import RowToy

N = 3000


def _run(target, **kw):
    kw.setdefault("prompt", "red house")
    return drain(decode(target, RunConfig(**kw))).trace


@pytest.mark.parametrize("h,w_grid", [(3, 3), (4, 6), (6, 4)])
@pytest.mark.parametrize("kw", [dict(window=3), dict(window=8), dict(window=4, init="repeat_horizon"),
                                dict(window=5, couple=1)], ids=["L3", "L8", "repeat", "coupled"])
def test_rows_in_turn_equal_sjd_under_keyed_noise(h, w_grid, kw):
    for seed in (0, 1):
        p = _run(Regrid(h, w_grid), method="pjd", pjd_c=w_grid + seed * 7, noise="keyed", seed=seed, **kw)
        s = _run(Regrid(h, w_grid), method="sjd", noise="keyed", seed=seed, **kw)
        assert p.tokens == s.tokens


@pytest.mark.parametrize("method,kw", [("pjd", dict(pjd_c=1, window=3)), ("pjd", dict(pjd_c=2, window=6)),
                                       ("zipar", dict(zipar_w=1)), ("zipar", dict(zipar_w=3))])
@pytest.mark.parametrize("noise", ["papers", "keyed"])
def test_traces_pass_the_checks(method, kw, noise):
    trace = _run(Regrid(4, 6), method=method, noise=noise, **kw)
    check_structure(trace)
    check_method(trace)
    assert len(trace.tokens) == 24


@pytest.mark.parametrize("c,window,seed", [(1, 6, 2), (2, 4, 2), (3, 5, 0)])
def test_rows_overlap_and_never_overtake(c, window, seed):
    """On a 4 x 6 grid: some forward commits tokens of two rows; a row judges a draft in column j only when
    the row above had committed column j before that forward (so it never overtakes it), and it started once the row
    above had >= c tokens."""
    trace = _run(Regrid(4, 6), method="pjd", pjd_c=c, window=window, seed=seed)
    count, multi = [0] * 4, False
    for st in trace.steps:
        new = [ev.pos for ev in st.events if ev.commits]
        multi |= len({p // 6 for p in new}) > 1
        for ev in st.events:
            r, j = divmod(ev.pos, 6)
            assert r == 0 or (count[r - 1] > j and count[r - 1] >= c)
        for p in new:
            count[p // 6] += 1
    assert multi and count == [6] * 4


def _samples(toy, method, n=N, **kw):
    return [tuple(_run(toy, method=method, prompt="x", seed=s, **kw).tokens) for s in range(n)]


@pytest.fixture(scope="module")
def row_toy():
    toy = RowToy(3, 2, 2, seed=3, scale=0.7)
    law = toy.exact_law()
    arr = np.array(list(law.values()))
    assert abs(arr.sum() - 1) < 1e-6 and arr.max() < 0.06 and (arr * N >= 5).sum() >= 30    # flat enough for power
    return toy, law


@pytest.mark.slow
@pytest.mark.parametrize("method,kw", [("pjd", dict(pjd_c=1, window=3)), ("pjd", dict(pjd_c=1, window=2, couple=1)),
                                       ("zipar", dict(zipar_w=1))], ids=["pjd-L3", "pjd-coupled", "zipar"])
def test_output_law_is_ars_where_missing_context_cannot_matter(row_toy, method, kw):
    toy, law = row_toy
    assert chi2_pvalue(_samples(toy, method, **kw), law) > 1e-3


@pytest.mark.slow
def test_chi2_sees_missing_context_where_it_matters():
    """Power: on the toy whose law also reads the last token of the row above, pjd at c = 1 departs from AR's law
    (p ~ 1e-179 at 600 samples: 600 suffice)."""
    toy = RowToy(3, 2, 2, seed=3, above=True, scale=2.0)
    assert chi2_pvalue(_samples(toy, "pjd", n=600, pjd_c=1, window=3), toy.exact_law()) < 1e-3


def test_only_the_top_active_row_samples_tokens():
    """A row below the top active one commits only accepted drafts (its rejection is postponed: no resampled or bonus
    token); the top active row does resample or take the bonus somewhere."""
    trace = _run(Regrid(4, 6), method="pjd", pjd_c=2, window=4, seed=2)
    sampled_top = 0
    for st in trace.steps[1:]:
        top = min(ev.pos // 6 for ev in st.events)
        for ev in st.events:
            if ev.decision in ("resampled", "bonus"):
                assert ev.pos // 6 == top
                sampled_top += 1
    lower = [ev for st in trace.steps[1:] for ev in st.events if ev.pos // 6 > min(e.pos // 6 for e in st.events)]
    assert sampled_top and {"exact", "rejected"} <= {ev.decision for ev in lower}


def test_row_causal_mask():
    """Two segments (a committed head and two drafts; a stand-in head and one draft) and one committed token fed
    alone: a draft sees its own head and earlier drafts and every freshly fed committed token, never the other row's
    drafts nor its stand-in."""
    seg_of = [0, 0, 0, 1, 1, -9]
    fresh = [True, False, False, False, False, True]
    want = torch.tensor([[1, 0, 0, 0, 0, 1],
                         [1, 1, 0, 0, 0, 1],
                         [1, 1, 1, 0, 0, 1],
                         [1, 0, 0, 1, 0, 1],
                         [1, 0, 0, 1, 1, 1],
                         [1, 0, 0, 0, 0, 1]], dtype=torch.bool)
    assert torch.equal(pjd.row_causal(seg_of, fresh), want)
