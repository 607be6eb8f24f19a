"""The instant preview re-scores recorded drafts in closed form; pinned to what the engine recorded."""

import numpy as np
import pytest

from specviz.preview import Knobs, cascade_accept, csd_accept, exact_prob, expected_length, rescore, step_scores
from specviz.trace import Sibling, TokenEvent
from tests.toy import run, toy

JUDGED = ("exact", "relaxed", "rejected")


@pytest.fixture(scope="module")
def traces():
    model, factory = toy(codes=8, grid=4)
    out = {}
    for seed in range(3):
        out[("csd", seed)] = run(model, factory, method="csd", seed=seed, window=4, lam=0.4, delta=0.6)
        out[("csd1h", seed)] = run(model, factory, method="csd", seed=seed, window=4, lam=0.4, delta=0.9,
                                   g="one_minus_h")
        out[("cascade", seed)] = run(model, factory, method="cascade", seed=seed, tree_depth=3, tree_topk=3,
                                     tau_pos=0.3, tau_seq=0.3, cascade_budget=10.0)
    return out


def judged(trace):
    return [ev for st in trace.steps for ev in st.events if ev.decision in JUDGED]


def test_csd_lambda_zero_is_exact(traces):
    evs = [ev for (m, _), t in traces.items() if m.startswith("csd") for ev in judged(t)]
    assert len(evs) > 10
    for ev in evs:
        assert csd_accept(ev, 0.0, 0.6) == pytest.approx(ev.exact_prob, abs=1e-6)


def test_csd_recorded_knobs_reproduce_recorded_b(traces):
    for (m, _), t in traces.items():
        if not m.startswith("csd"):
            continue
        k = Knobs.from_config(t.config)
        for ev in judged(t):
            assert csd_accept(ev, k.lam, k.delta, k.g) == pytest.approx(ev.accept_prob, abs=1e-5)


def test_larger_lambda_never_lowers_b(traces):
    evs = [ev for (m, _), t in traces.items() if m == "csd" for ev in judged(t)]
    lams = np.linspace(0, 2, 11)
    for ev in evs:
        bs = [csd_accept(ev, lam, 0.6) for lam in lams]
        assert all(b2 >= b1 - 1e-12 for b1, b2 in zip(bs, bs[1:], strict=False))
        assert all(0 <= b <= 1 for b in bs)
    assert any(csd_accept(ev, 2.0, 1.01) > ev.exact_prob + 1e-6 for ev in evs)      # it does move somewhere


def test_csd_gate_closes_at_delta_zero(traces):
    for ev in (ev for (m, _), t in traces.items() if m == "csd" for ev in judged(t)):
        assert csd_accept(ev, 5.0, 0.0) == pytest.approx(exact_prob(ev), abs=1e-12)


def first_siblings(trace):
    """The first judged candidate at each level of each step: the engine judged it against q itself."""
    out = []
    for st in trace.steps:
        seen = set()
        for ev in st.events:
            if ev.decision in JUDGED and ev.level not in seen:
                seen.add(ev.level)
                out.append(ev)
    return out


def test_cascade_recorded_taus_reproduce_recorded_b(traces):
    evs = [ev for (m, _), t in traces.items() if m == "cascade" for ev in first_siblings(t)]
    grouped = [ev for ev in evs if ev.interchangeable or ev.convergent]
    assert len(grouped) >= 3, "the fixture should form some CASCADE groups"
    for ev in evs:
        b, _ = cascade_accept(ev, 0.3, 0.3)
        assert b == pytest.approx(ev.accept_prob, abs=1e-5)
        inter = sorted(r.node for r in ev.siblings if r.cos >= 0.3)
        assert inter == sorted(ev.interchangeable)


def test_cascade_tight_taus_are_lossless_and_loose_taus_monotone(traces):
    for ev in (ev for (m, _), t in traces.items() if m == "cascade" for ev in judged(t)):
        assert cascade_accept(ev, 1.01, 1.01)[0] == pytest.approx(exact_prob(ev), abs=1e-12)
        bs = [cascade_accept(ev, tau, tau)[0] for tau in (1.0, 0.9, 0.6, 0.3, 0.0)]
        assert all(b2 >= b1 - 1e-12 for b1, b2 in zip(bs, bs[1:], strict=False))


def test_cascade_budget_caps_moved_mass():
    ev = TokenEvent(pos=3, token=1, decision="rejected", p_draft=1.0, p_target=0.2,
                    siblings=[Sibling(2, 5, 0.3, 0.99, -1.0), Sibling(3, 6, 0.1, 0.1, 0.97),
                              Sibling(4, 7, 0.2, 0.1, 0.1)])
    assert cascade_accept(ev, 0.95, 0.95) == pytest.approx((0.6, 0.4))
    assert cascade_accept(ev, 0.95, 0.95, budget_left=0.1) == pytest.approx((0.3, 0.1))
    assert cascade_accept(ev, 0.999, 0.999) == pytest.approx((0.2, 0.0))


def test_expected_length_closed_form():
    ev = lambda lvl: TokenEvent(pos=lvl, token=0, decision="exact", level=lvl)   # noqa: E731
    assert expected_length([]) == 1.0
    assert expected_length([(ev(1), 1.0), (ev(2), 1.0), (ev(3), 0.5)]) == pytest.approx(3.5)
    assert expected_length([(ev(1), 0.5), (ev(2), 0.5)]) == pytest.approx(1.75)
    # two siblings at level 1, b = 0.5 each: the level is passed with 1 - 0.25
    assert expected_length([(ev(1), 0.5), (ev(1), 0.5)]) == pytest.approx(1.75)


def test_rescore_maps_and_compression(traces):
    t = traces[("csd", 0)]
    k0 = Knobs.from_config(t.config)
    same, more, none = rescore(t, k0), rescore(t, Knobs.from_config(t.config, lam=3.0, delta=1.01)), \
        rescore(t, Knobs.from_config(t.config, lam=0.0))
    assert same.tunable and same.accept.shape == tuple(t.grid)
    judged_cells = np.isfinite(same.accept)
    assert judged_cells.any() and np.allclose(same.accept[judged_cells], same.recorded[judged_cells], atol=1e-5)
    assert same.expected_compression == pytest.approx(same.baseline_compression, rel=1e-6)
    assert none.expected_compression <= same.expected_compression + 1e-9 <= more.expected_compression + 2e-9
    assert np.all(more.accept[judged_cells] >= same.accept[judged_cells] - 1e-9)
    assert len(same.expected_len) == len(t.steps) - 1


def test_untunable_methods_keep_recorded_b():
    model, factory = toy(codes=8, grid=4)
    t = run(model, factory, method="sjd", seed=0, window=4)
    pv = rescore(t, Knobs(lam=5.0, delta=1.0, tau_pos=0.0, tau_seq=0.0))
    assert not pv.tunable
    for row in step_scores(t, Knobs(lam=5.0, delta=1.0, tau_pos=0.0, tau_seq=0.0)):
        for ev, b in row:
            assert b == ev.accept_prob
    ar = rescore(run(model, factory, method="ar", seed=0), Knobs(lam=0.1, delta=0.5, tau_pos=0.9, tau_seq=0.9))
    assert ar.expected_compression == pytest.approx(1.0) and np.isnan(ar.accept).all()
