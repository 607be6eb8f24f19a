"""The instant preview re-scores recorded drafts in closed form; pinned to what the engine recorded."""

import math

import numpy as np
import pytest

from specviz.analysis.preview import expected_length, rescore, step_scores
from specviz.core.records import TokenEvent
from specviz.engine.registry import KnobValues
from specviz.engine.rescore import cascade_group, cascade_level, cascade_rescore, csd_accept, exact_prob
from tests.support.toy import grp, run, toy

JUDGED = ("exact", "relaxed", "rejected")


@pytest.fixture(scope="module")
def traces():
    model, factory = toy(codes=8, grid=4)
    out = {}
    for seed in range(3):
        out[("csd", seed)] = run(model, factory, method="csd", seed=seed, window=4, lam=0.4, delta=0.6)
        out[("csd1h", seed)] = run(model, factory, method="csd", seed=seed, window=4, lam=0.4, delta=0.9,
                                   g="one_minus_h")
        tree = dict(method="cascade", seed=seed, tree_depth=3, tree_topk=3, tau_pos=0.3, tau_seq=0.3)
        out[("cascade", seed)] = run(model, factory, **tree, cascade_budget=10.0)
        out[("cascade-siblings", seed)] = run(model, factory, **tree, cascade_budget=10.0, cascade_sets="siblings")
        out[("cascade-tight", seed)] = run(model, factory, **tree, cascade_budget=0.1)
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
        k = KnobValues.from_config(t.config)
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


def levels(trace):
    """(judged events of one level in judge order, the step) for every level of every step, in walk order."""
    for st in trace.steps:
        evs = [ev for ev in st.events if ev.decision in JUDGED]
        for lvl in sorted({ev.level for ev in evs}):
            yield [ev for ev in evs if ev.level == lvl], st


def fully_judged(evs, st):
    """Every sibling of the level was judged (the walk resampled), so the preview knows the whole level."""
    par = evs[0].parent
    return len(evs) == sum(r.parent == par for r in st.drafted) and evs[-1].decision == "rejected"


@pytest.mark.parametrize("name", ["cascade", "cascade-siblings", "cascade-tight"])
def test_cascade_recorded_knobs_reproduce_recorded_b_and_level_tv(traces, name):
    """Point-mass siblings: the preview's walk is the engine's. With the recorded knobs it gives every recorded b
    where the level's scale did not bind or every sibling was judged, and the recorded level TV of fully judged
    levels."""
    grouped = full = 0
    for (m, _), t in traces.items():
        if m != name:
            continue
        k = KnobValues.from_config(t.config)
        for evs, st in levels(t):
            lvl = cascade_level(evs, k, grp(evs[0]).budget_left)         # the engine's own budget_left of the level
            grouped += any(grp(ev).interchangeable or grp(ev).convergent for ev in evs)
            if fully_judged(evs, st):
                full += 1
                assert lvl.cost == pytest.approx(evs[0].tv_cost, abs=1e-5)
            if fully_judged(evs, st) or grp(evs[0]).scale == 1.0:
                assert lvl.b[:len(evs)] == pytest.approx([ev.accept_prob for ev in evs], abs=1e-5)
            for ev in evs:
                inter, conv = cascade_group(ev, k.tau_pos, k.tau_seq, k.cascade_sets)
                assert sorted(inter) == sorted(grp(ev).interchangeable) and sorted(conv) == sorted(grp(ev).convergent)
    assert grouped >= 3 and full >= 3, "the fixture should form groups and resample"


def test_cascade_tight_taus_are_lossless_and_loose_taus_monotone(traces):
    for (m, _), t in traces.items():
        if not m.startswith("cascade"):
            continue
        for evs, _ in levels(t):
            tight = KnobValues.from_config(t.config, tau_pos=1.01, tau_seq=1.01)
            assert cascade_level(evs, tight, math.inf).cost < 1e-6
            for ev, b in zip(evs, cascade_level(evs, tight, math.inf).b):
                assert b == pytest.approx(ev.exact_prob, abs=1e-6)       # lossless against the running residual
            bs = [cascade_level(evs, KnobValues.from_config(t.config, tau_pos=tau, tau_seq=tau), math.inf).b[0]
                  for tau in (1.0, 0.9, 0.6, 0.3, 0.0)]
            assert all(b2 >= b1 - 1e-6 for b1, b2 in zip(bs, bs[1:], strict=False))


@pytest.mark.slow
def test_cascade_preview_spends_at_most_the_budget(traces):
    """The preview's levels of one step stay within the moved budget, level by level as the engine does."""
    for (m, _), t in traces.items():
        if not m.startswith("cascade"):
            continue
        for budget in (0.0, 0.05, 0.3):
            k = KnobValues.from_config(t.config, cascade_budget=budget)
            for st in t.steps:
                evs = [ev for ev in st.events if ev.decision in JUDGED]
                spent = 0.0
                for lvl in sorted({ev.level for ev in evs}):
                    spent += cascade_level([ev for ev in evs if ev.level == lvl], k, budget - spent).cost
                assert spent <= budget + 1e-5
                bs = cascade_rescore(evs, k)
                assert len(bs) == len(evs) and all(0 <= b <= 1 for b in bs)
            if budget == 0.0:                                        # no budget: the lossless walk
                for ev, b in (x for row in step_scores(t, k) for x in row):
                    assert b == pytest.approx(ev.exact_prob, abs=1e-6)


def test_expected_length_closed_form():
    ev = lambda lvl: TokenEvent(pos=lvl, token=0, decision="exact", level=lvl)   # noqa: E731
    assert expected_length([]) == 1.0
    assert expected_length([(ev(1), 1.0), (ev(2), 1.0), (ev(3), 0.5)]) == pytest.approx(3.5)
    assert expected_length([(ev(1), 0.5), (ev(2), 0.5)]) == pytest.approx(1.75)
    # two siblings at level 1, b = 0.5 each: the level is passed with 1 - 0.25
    assert expected_length([(ev(1), 0.5), (ev(1), 0.5)]) == pytest.approx(1.75)


def test_rescore_maps_and_compression(traces):
    t = traces[("csd", 0)]
    k0 = KnobValues.from_config(t.config)
    same, more, none = rescore(t, k0), rescore(t, KnobValues.from_config(t.config, lam=3.0, delta=1.01)), \
        rescore(t, KnobValues.from_config(t.config, lam=0.0))
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
    pv = rescore(t, KnobValues(lam=5.0, delta=1.0, tau_pos=0.0, tau_seq=0.0))
    assert not pv.tunable
    for row in step_scores(t, KnobValues(lam=5.0, delta=1.0, tau_pos=0.0, tau_seq=0.0)):
        for ev, b in row:
            assert b == ev.accept_prob
    ar = rescore(run(model, factory, method="ar", seed=0), KnobValues(lam=0.1, delta=0.5, tau_pos=0.9, tau_seq=0.9))
    assert ar.expected_compression == pytest.approx(1.0) and np.isnan(ar.accept).all()
