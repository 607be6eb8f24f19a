"""Lossless methods reproduce AR sampling: chi-square against the exact enumerated joint law of a FLAT toy, with power
(docs/methods.md §8.1)."""
import numpy as np
import pytest
from scipy import stats

from tests.support.toy import FLAT, exact_law, run, toy

N = 3000


def chi2_pvalue(samples, law):
    keys = sorted(law)
    exp = np.array([law[k] for k in keys]) * len(samples)
    counts = {k: 0 for k in keys}
    for s in samples:
        counts[tuple(s)] += 1
    obs = np.array([counts[k] for k in keys], float)
    small = exp < 5                                            # pool rare cells
    obs = np.append(obs[~small], obs[small].sum())
    exp = np.append(exp[~small], exp[small].sum())
    keep = exp > 0
    return stats.chisquare(obs[keep], exp[keep] * obs.sum() / exp[keep].sum()).pvalue


@pytest.fixture(scope="module")
def setup():
    model, factory = toy(**FLAT)
    return model, factory, exact_law(model)


def test_toy_is_flat(setup):
    """The chi-square test has power only if the law is spread: no outcome above 5 %, >= 30 well-filled cells."""
    law = np.array(list(setup[2].values()))
    assert abs(law.sum() - 1) < 1e-5 and law.max() < 0.05 and (law * N >= 5).sum() >= 30


@pytest.mark.parametrize("kw", [
    dict(method="sjd", window=3),
    dict(method="sjd", window=4, init="repeat_horizon"),
    dict(method="sd", tree="dynamic", tree_depth=3, tree_topk=2, tree_nodes=6),
    dict(method="sd", tree="static", tree_depth=3, tree_topk=2),
    dict(method="sd", tree="dynamic", tree_depth=3, tree_topk=2, tree_sampling="sample"),
], ids=["sjd", "sjd-repeat", "sd-dynamic", "sd-static", "sd-sampled"])
@pytest.mark.slow
def test_lossless_matches_ar(setup, kw):
    model, factory, law = setup
    samples = [run(model, factory, seed=s, **kw).tokens for s in range(N)]
    assert chi2_pvalue(samples, law) > 1e-3


@pytest.mark.slow
def test_chi2_has_power(setup):
    """The same test rejects a deliberately biased rule (csd with a large relaxation)."""
    model, factory, law = setup
    samples = [run(model, factory, seed=s, method="csd", window=3, lam=0.8, delta=1.0, h_norm="vocab").tokens
               for s in range(N)]
    assert chi2_pvalue(samples, law) < 1e-3
