"""Keyed noise samples the target's law: χ² on the flat toy against the exact enumerated joint law for AR under
keyed noise, and every lossless method under keyed noise commits AR's tokens seed by seed, hence samples the same law
(docs/methods.md §9)."""
import pytest

from tests.engine.test_exactness import N, chi2_pvalue, rejects_within
from tests.support.toy import FLAT, OnePrefill, exact_law, run, toy

N_METHOD = 800          # the power check's runs (csd, large λ)
K_EQUAL = 400           # per lossless method: seeds on which its tokens must be AR's (see the test)


@pytest.fixture(scope="module")
def setup():
    model, factory = toy(**FLAT)
    return OnePrefill(model), factory, exact_law(model)


@pytest.fixture(scope="module")
def ar_keyed(setup):
    """AR's keyed tokens of seeds 0..K_EQUAL-1 (the first of the N runs the chi-square below takes)."""
    model, factory, _ = setup
    return [run(model, factory, seed=s, method="ar", noise="keyed").tokens for s in range(K_EQUAL)]


@pytest.mark.slow
def test_ar_under_keyed_noise_samples_q(setup, ar_keyed):
    model, factory, law = setup
    samples = ar_keyed + [run(model, factory, seed=s, method="ar", noise="keyed").tokens for s in range(K_EQUAL, N)]
    assert chi2_pvalue(samples, law) > 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("kw", [
    dict(method="sjd", window=3),
    dict(method="mcsjd", window=3),
    dict(method="sjdpac", window=8, pac_width=2, pac_depth=2),
    dict(method="sd", tree="dynamic", tree_depth=3, tree_topk=2, tree_nodes=6),
    dict(method="sd", tree="dynamic", tree_depth=3, tree_topk=2, tree_sampling="sample"),
], ids=["sjd", "mcsjd", "sjdpac", "sd", "sd-sampled"])
def test_lossless_methods_under_keyed_noise_sample_q(setup, ar_keyed, kw):
    """Under keyed noise a lossless method commits AR's tokens seed by seed (docs/methods.md §9), so it samples AR's
    law, which test_ar_under_keyed_noise_samples_q checks by chi-square on N runs. Asserted on K_EQUAL seeds, this is
    a stronger check than the chi-square of 800 of the method's own runs it replaced: a method whose law is ε from
    AR's in total variation differs from AR's draw on the same seed with probability >= ε (any coupling), so 400 seeds
    catch every ε >= 0.017 with probability >= 1 - 0.983^400 > 0.999; a chi-square has no such bound."""
    model, factory, _ = setup
    differ = [s for s in range(K_EQUAL) if run(model, factory, seed=s, noise="keyed", **kw).tokens != ar_keyed[s]]
    assert not differ, f"{len(differ)} of {K_EQUAL} seeds differ from AR's tokens, first {differ[:5]}"


@pytest.mark.slow
def test_keyed_chi2_has_power(setup):
    """The same test within the same number of runs rejects a relaxed rule that changes the law (csd, large λ):
    looks at 400 and N_METHOD, each at 1e-3 / 2 (rejects_within; here p = 6e-5 at 400, 2e-26 at 800)."""
    model, factory, law = setup
    seen = rejects_within(lambda s: run(model, factory, seed=s, method="csd", window=3, lam=0.8, delta=1.0,
                                        h_norm="vocab", noise="keyed").tokens, law, (400, N_METHOD))
    assert seen[-1] < 1e-3 / 2, seen
