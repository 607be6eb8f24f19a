"""Lossless methods reproduce AR sampling: chi-square against the exact enumerated joint law of a FLAT toy, with power
(docs/methods.md §8.1)."""
import numpy as np
import pytest
from scipy import stats

from tests.support.toy import FLAT, OnePrefill, exact_law, run, toy

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


def rejects_within(draw, law, looks, alpha=1e-3) -> list[float]:
    """A power check that stops once the verdict is in: the chi-square p-value of draw(0..n-1) at each n of `looks`
    (increasing), stopping at the first below alpha / len(looks). Bonferroni over the looks: were the law right, the
    chance that any look falls below its level is at most alpha, the false-alarm rate of one test at the last look.
    The seeds are fixed, so a run stops at the same look every time. Returns the p-values seen."""
    samples, seen = [], []
    for n in looks:
        samples += [draw(s) for s in range(len(samples), n)]
        seen.append(chi2_pvalue(samples, law))
        if seen[-1] < alpha / len(looks):
            break
    return seen


@pytest.fixture(scope="module")
def setup():
    model, factory = toy(**FLAT)
    return OnePrefill(model), factory, exact_law(model)


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


@pytest.mark.parametrize("kw", [dict(method="sjd", window=3),
                                dict(method="sd", tree="dynamic", tree_depth=3, tree_topk=2, tree_sampling="sample")],
                         ids=["sjd", "sd-sampled"])
def test_one_prefill_runs_bit_for_bit(setup, kw):
    """The chi-square runs share one prefill (OnePrefill): each run's tokens and decisions are the model's own."""
    model, factory, _ = setup
    seen = lambda t: (t.tokens, [(e.pos, e.token, e.decision, e.u) for st in t.steps for e in st.events])  # noqa: E731
    for s in range(8):
        assert seen(run(model, factory, seed=s, **kw)) == seen(run(model.m, factory, seed=s, **kw))
    assert len(model._done) == 1


@pytest.mark.slow
def test_chi2_has_power(setup):
    """The same test rejects a deliberately biased rule (csd with a large relaxation) within N runs: looks at
    400, 800, 1600 and N, each at 1e-3 / 4 (rejects_within; here p = 5e-24 at 800, 2e-272 at N)."""
    model, factory, law = setup
    seen = rejects_within(lambda s: run(model, factory, seed=s, method="csd", window=3, lam=0.8, delta=1.0,
                                        h_norm="vocab").tokens, law, (400, 800, 1600, N))
    assert seen[-1] < 1e-3 / 4, seen
