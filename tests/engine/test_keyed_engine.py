"""Keyed noise through the engine on the toy (docs/methods.md §9): every lossless method commits AR's keyed
tokens, every relaxed method at zero relaxation paints AR's image, a relaxed method changes a token only at a relaxed
decision, and the trace records the mode without changing the papers' mode traces."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import torch

from specviz.core.sampling import coupled_accept
from specviz.core.trace import KEYED_KEYS, Trace
from specviz.engine.validate import check_method
from tests.support.toy import run, toy

LOSSLESS = {
    "sjd": dict(method="sjd", window=4),
    "sjd-repeat": dict(method="sjd", window=3, init="repeat_horizon"),
    "mcsjd": dict(method="mcsjd", window=4),
    "sjdpac": dict(method="sjdpac", window=8, pac_width=2, pac_depth=2),
    "sd-dynamic": dict(method="sd", tree_depth=3, tree_topk=2, tree_nodes=6),
    "sd-static": dict(method="sd", tree="static", tree_depth=3, tree_topk=2),
    "sd-chain": dict(method="sd", tree="chain", tree_depth=3),
    "sd-sampled": dict(method="sd", tree_depth=3, tree_topk=2, tree_sampling="sample"),
}
ZERO = {   # every relaxed method with its relaxation off
    "csd": dict(method="csd", window=4, lam=0.0, delta=1.0),
    "gsd": dict(method="gsd", window=4, gsd_group=1),
    "cascade": dict(method="cascade", tree_depth=3, tree_topk=2, tree_nodes=6, cascade_budget=0.0),
    "lantern": dict(method="lantern", tree_depth=3, tree_topk=2, tree_nodes=6, lantern_delta=0.0),
    "lanternpp": dict(method="lanternpp", tree="static", tree_depth=3, tree_topk=2, lanternpp_lambda=1.0),
}
RELAXED = {
    "csd": dict(method="csd", window=4, lam=2.0, delta=1.0),
    "gsd": dict(method="gsd", window=4, gsd_group=4, gsd_gap=0.5, gsd_dist=50.0),
    "cascade": dict(method="cascade", tree_depth=3, tree_topk=3, tree_nodes=8, tau_pos=0.3, tau_seq=0.3),
    "lantern": dict(method="lantern", tree_depth=3, tree_topk=2, tree_nodes=6, lantern_k=3, lantern_delta=0.5),
    "lanternpp": dict(method="lanternpp", tree="static", tree_depth=3, tree_topk=2, lantern_k=3,
                      lanternpp_lambda=20.0),
}
PAIRS = [("red house", 0), ("red house", 1), ("blue sky over snow", 2), ("a tree", 3), ("red house", 4),
         ("blue sky over snow", 5)]


@pytest.fixture(scope="module")
def world():
    return toy(codes=5, grid=3, sharpen=0.5)


def ar_tokens(world, prompt, seed):
    return run(*world, method="ar", prompt=prompt, seed=seed, noise="keyed").tokens


def pixels(model, tokens):
    return np.asarray(model.decode_image(tokens))


@pytest.mark.parametrize("name", LOSSLESS)
def test_lossless_methods_paint_ars_keyed_image(world, name):
    model, _ = world
    for prompt, seed in PAIRS:
        want = ar_tokens(world, prompt, seed)
        t = run(*world, prompt=prompt, seed=seed, noise="keyed", **LOSSLESS[name])
        assert t.tokens == want, (prompt, seed)
        assert np.array_equal(pixels(model, t.tokens), pixels(model, want))
        assert t.summary["tv_cost"] == 0.0 and t.summary["relaxed"] == 0


def test_toy_lossless_tokens_equal_ars():
    """The mutation check's detector: a fresh toy, sjd and sd on three pairs (no fixtures)."""
    world = toy(codes=5, grid=3, sharpen=0.5)
    for prompt, seed in PAIRS[:3]:
        want = ar_tokens(world, prompt, seed)
        for name in ("sjd", "sd-dynamic"):
            assert run(*world, prompt=prompt, seed=seed, noise="keyed", **LOSSLESS[name]).tokens == want


@pytest.mark.parametrize("name", ZERO)
def test_relaxed_methods_at_zero_relaxation_paint_ars_image(world, name):
    for prompt, seed in PAIRS:
        t = run(*world, prompt=prompt, seed=seed, noise="keyed", **ZERO[name])
        assert t.tokens == ar_tokens(world, prompt, seed), (prompt, seed)
        assert t.summary["tv_cost"] == 0.0


@pytest.mark.parametrize("name", RELAXED)
def test_relaxed_methods_change_tokens_only_where_they_relax(world, name):
    """A committed token differs from the race sample x* of its own prefix only at a relaxed decision; the first
    departure from AR's tokens is a relaxed decision; every changed slot has a positive recorded cost."""
    changed = 0
    for prompt, seed in PAIRS:
        t = run(*world, prompt=prompt, seed=seed, noise="keyed", **RELAXED[name])
        ar = ar_tokens(world, prompt, seed)
        com = t.committing()
        for _, ev in com.values():
            if ev.decision in ("exact", "rejected", "relaxed"):
                assert (ev.token != ev.target_sample) == (ev.decision == "relaxed")
            if ev.decision == "relaxed":
                assert ev.tv_cost > 0 and ev.u >= 0
        diff = [i for i, (a, b) in enumerate(zip(t.tokens, ar)) if a != b]
        if diff:
            changed += 1
            assert com[diff[0]][1].decision == "relaxed"
        else:
            assert all(ev.decision != "relaxed" for _, (_, ev) in com.items())
    assert changed > 0                                                   # the relaxation does fire here


def test_coupled_prob_is_recorded_beside_the_papers_one(world):
    t = run(*world, prompt="red house", seed=1, noise="keyed", **LOSSLESS["sjd"])
    judged = [ev for _, ev in t.events() if ev.decision in ("exact", "rejected")]
    assert judged
    for ev in judged:
        assert ev.coupled_prob is not None and ev.target_sample is not None
        if ev.point_mass:                       # J_x/p_x = q(x) = min(1, q/p) for a point-mass draft
            assert abs(ev.coupled_prob - ev.p_target) < 1e-6
        assert ev.coupled_prob <= 1.0 + 1e-6
    refined = [ev for ev in judged if not ev.point_mass]
    assert refined and all(ev.coupled_prob <= 1 for ev in refined)


def test_coupled_prob_by_hand():
    """p = (.5, .3, .2, 0, 0), q uniform over 5: Σ_w max(p_w/p_0, q_w/q_0) = 5, J_0 = 0.2, J_0/p_0 = 0.4 (the papers'
    min(1, q/p) = 0.4 too); at x = 2: Σ = max(2.5, 1) + max(1.5, 1) + 1 + 1 + 1 = 7, J_2/p_2 = 1/(7 * 0.2)."""
    p = torch.tensor([[0.5, 0.3, 0.2, 0.0, 0.0]] * 2)
    q = torch.full((2, 5), 0.2)
    got = coupled_accept(p, q, torch.tensor([0, 2])).tolist()
    assert abs(got[0] - 0.4) < 1e-6 and abs(got[1] - 1 / 1.4) < 1e-6


def test_keyed_noise_is_recorded_and_the_papers_mode_is_not_touched(world):
    papers = run(*world, prompt="red house", seed=0, **LOSSLESS["sjd"])
    blob = json.dumps(papers.to_json())
    assert "noise" not in papers.config and not any(k in blob for k in KEYED_KEYS)
    keyed = run(*world, prompt="red house", seed=0, noise="keyed", **LOSSLESS["sjd"])
    assert keyed.config["noise"] == "keyed"
    d = keyed.to_json()
    assert any("coupled_prob" in e and "target_sample" in e for s in d["steps"] for e in s["events"])
    back = Trace.from_json(json.loads(json.dumps(d)))
    assert back.to_json() == d
    check_method(back)
    assert keyed.summary["tv_bound"] == 0.0
    csd = run(*world, prompt="red house", seed=0, noise="keyed", **RELAXED["csd"])
    assert csd.summary["tv_bound"] is None                  # the papers' promise is about their own rule


def test_bad_coupled_prob_is_refused(world):
    d = run(*world, prompt="red house", seed=0, noise="keyed", **LOSSLESS["sjd"]).to_json()
    ev = next(e for s in d["steps"] for e in s["events"] if "coupled_prob" in e)
    ev["coupled_prob"] = 2.0
    with pytest.raises(ValueError, match="coupled_prob"):
        Trace.from_json(d)


def test_cli_has_the_noise_flag(capsys):
    from specviz.__main__ import main
    with pytest.raises(SystemExit) as e:
        main(["generate", "--noise", "sideways"])
    assert e.value.code == 2 and "--noise" in capsys.readouterr().err


def test_keyed_verdicts_state_the_keyed_decision():
    """The inspector's verdict on a keyed run names x*, the relaxation chance c = (b − e)/(1 − e) against u, and
    for a relaxed token what AR draws there given the prefix."""
    from specviz.render.verdict import num, verdict
    world = toy(codes=5, grid=3, sharpen=0.5)
    seen = set()
    for (prompt, seed), kw in itertools.product(PAIRS, (RELAXED["csd"], LOSSLESS["sjd"])):
        t = run(*world, prompt=prompt, seed=seed, noise="keyed", **kw)
        for _, ev in t.events():
            text = verdict(ev, "CSD's relaxation").text()
            assert ev.target_sample is not None
            seen.add(ev.decision)
            if ev.decision == "relaxed":
                c = (ev.accept_prob - ev.exact_prob) / (1 - ev.exact_prob)
                assert ev.u < c and f"= {num(c)}" in text and f"would have drawn token {ev.target_sample}" in text
            elif ev.decision == "exact":
                assert f"equals the target's keyed sample x* = {ev.token}" in text
            elif ev.decision == "rejected":
                assert f"x* = {ev.target_sample} → rejected" in text
            else:
                assert f"token {ev.token} is the target's keyed sample" in text
    assert {"relaxed", "exact", "rejected"} <= seen
