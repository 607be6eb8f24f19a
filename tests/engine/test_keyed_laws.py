"""Keyed noise samples the target's law: χ² on the flat toy against the exact enumerated joint law, for AR
under keyed noise and for every lossless method under keyed noise (docs/methods.md §9)."""
import pytest

from tests.engine.test_exactness import N, chi2_pvalue, rejects_within
from tests.support.toy import FLAT, OnePrefill, exact_law, run, toy

N_METHOD = 800          # per lossless method: its tokens equal AR's seed by seed (test_keyed_engine), so this only
#                         checks the law again on fewer runs (the toy's runs are slow on a shared CPU)


@pytest.fixture(scope="module")
def setup():
    model, factory = toy(**FLAT)
    return OnePrefill(model), factory, exact_law(model)


@pytest.mark.slow
def test_ar_under_keyed_noise_samples_q(setup):
    model, factory, law = setup
    samples = [run(model, factory, seed=s, method="ar", noise="keyed").tokens for s in range(N)]
    assert chi2_pvalue(samples, law) > 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("kw", [
    dict(method="sjd", window=3),
    dict(method="mcsjd", window=3),
    dict(method="sjdpac", window=8, pac_width=2, pac_depth=2),
    dict(method="sd", tree="dynamic", tree_depth=3, tree_topk=2, tree_nodes=6),
    dict(method="sd", tree="dynamic", tree_depth=3, tree_topk=2, tree_sampling="sample"),
], ids=["sjd", "mcsjd", "sjdpac", "sd", "sd-sampled"])
def test_lossless_methods_under_keyed_noise_sample_q(setup, kw):
    model, factory, law = setup
    samples = [run(model, factory, seed=s, noise="keyed", **kw).tokens for s in range(N_METHOD)]
    assert chi2_pvalue(samples, law) > 1e-3


@pytest.mark.slow
def test_keyed_chi2_has_power(setup):
    """The same test within the same number of runs rejects a relaxed rule that changes the law (csd, large λ):
    looks at 400 and N_METHOD, each at 1e-3 / 2 (rejects_within; here p = 6e-5 at 400, 2e-26 at 800)."""
    model, factory, law = setup
    seen = rejects_within(lambda s: run(model, factory, seed=s, method="csd", window=3, lam=0.8, delta=1.0,
                                        h_norm="vocab", noise="keyed").tokens, law, (400, N_METHOD))
    assert seen[-1] < 1e-3 / 2, seen
