"""Keyed noise (docs/methods.md §9): the primitives (the race, the coupled acceptance J_v, the change
probability) against Monte Carlo and against an independent exact joint law of two races, and the relaxed keyed rule's
output law against its recorded cost."""
from __future__ import annotations

import numpy as np
import torch
from scipy import integrate, stats

from specviz.core import sampling
from specviz.core.sampling import race, race_noise, relax_excess, tv
from specviz.engine import keyed, rules


def laws(seed: int, v: int = 5, sharp: float = 2.0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    p = (torch.randn(v, generator=g) * sharp).softmax(0)
    q = (torch.randn(v, generator=g) * sharp).softmax(0)
    return p, q


def chi2(obs: np.ndarray, law: np.ndarray) -> float:
    """χ² p-value of counts against a law (expected counts renormalised to the observed total)."""
    exp = np.asarray(law, float)
    return stats.chisquare(obs, exp / exp.sum() * obs.sum()).pvalue


def exact_joint(p: torch.Tensor, q: torch.Tensor) -> np.ndarray:
    """P(race(p) = x, race(q) = y) (V, V), by its own derivation: with s = E_x/p_x and t = E_y/q_y = ρ s,
    J(x, y) = p_x q_y ∫ dρ / K(ρ)² over p_y/q_y < ρ < p_x/q_x, K(ρ) = p_x + ρ q_y + Σ_{w ≠ x,y} max(p_w, ρ q_w);
    the diagonal is 1 / Σ_w max(p_w/p_x, q_w/q_x) (the E_x = t integral)."""
    p, q = p.double().numpy(), q.double().numpy()
    n = len(p)
    out = np.zeros((n, n))
    for x in range(n):
        for y in range(n):
            if p[x] == 0 or q[y] == 0:
                continue
            if x == y:
                out[x, x] = 1.0 / np.maximum(p / p[x], q / q[x]).sum() if q[x] > 0 else 0.0
                continue
            rest = [w for w in range(n) if w not in (x, y)]
            lo, hi = p[y] / q[y], (p[x] / q[x] if q[x] > 0 else np.inf)
            if hi <= lo:
                continue

            def f(r):
                k = p[x] + r * q[y] + sum(max(p[w], r * q[w]) for w in rest)
                return 1.0 / k ** 2
            pts = sorted({p[w] / q[w] for w in rest if q[w] > 0 and lo < p[w] / q[w] < hi}) or None
            val = integrate.quad(f, lo, hi, points=pts if np.isfinite(hi) else None, limit=200, epsabs=1e-13)[0]
            out[x, y] = p[x] * q[y] * val
    return out


def test_race_noise_is_a_function_of_seed_and_position_only():
    a = race_noise(7, 3, 16)
    race_noise(7, 0, 16), race_noise(8, 3, 16)
    assert torch.equal(a, race_noise(7, 3, 16))                       # whatever was drawn in between
    assert not torch.equal(a, race_noise(7, 4, 16)) and not torch.equal(a, race_noise(8, 3, 16))
    law = torch.rand(16, generator=torch.Generator().manual_seed(0))
    law = law / law.sum()
    a, b = keyed.Noise(7, 16), keyed.Noise(7, 16)
    forward = [a.race(i, law) for i in range(6)]
    backward = [b.race(i, law) for i in reversed(range(6))][::-1]
    assert forward == backward                                        # independent of the order it is asked for
    n = keyed.Noise(7, 16)
    assert n.u(3, 5) == n.u(3, 5) != n.u(3, 6) and n.fresh(2) == keyed.Noise(7, 16).fresh(2)


def test_race_samples_the_law():
    p, _ = laws(0, v=6)
    draws = [int(race(p, race_noise(1, pos, 6))) for pos in range(6000)]
    obs = np.bincount(draws, minlength=6)
    assert chi2(obs, p.double().numpy()) > 1e-3


def test_exact_joint_has_the_right_marginals():
    for s in range(4):
        p, q = laws(s)
        j = exact_joint(p, q)
        assert np.allclose(j.sum(1), p.double().numpy(), atol=1e-7)
        assert np.allclose(j.sum(0), q.double().numpy(), atol=1e-7)


def test_coupled_joint_closed_form_matches_monte_carlo_and_bounds():
    """J_v = 1 / Σ_w max(p_w/p_v, q_w/q_v) against 200k races on random laws (within 5 sigma), and
    (1 - TV)/(1 + TV) <= Σ_v J_v <= 1 - TV."""
    g = torch.Generator().manual_seed(11)
    n = 200_000
    for s in range(4):
        p, q = laws(s)
        j = sampling.coupled_joint(p, q)
        e = -torch.log1p(-torch.rand(n, 5, generator=g))
        a, b = race(p[None].expand(n, -1), e), race(q[None].expand(n, -1), e)
        mc = torch.bincount(a[a == b], minlength=5).double() / n
        sigma = (j.double() * (1 - j.double()) / n).sqrt().clamp_min(1e-4)
        assert ((mc - j.double()).abs() <= 5 * sigma).all(), (mc, j)
        d = float(tv(p, q))
        assert (1 - d) / (1 + d) - 1e-6 <= float(j.sum()) <= 1 - d + 1e-6
        assert np.allclose(j.numpy(), np.diag(exact_joint(p, q)), atol=1e-6)


def test_coupled_accept_is_j_over_p():
    p, q = laws(3)
    x = torch.arange(5)
    got = sampling.coupled_accept(p[None].expand(5, -1), q[None].expand(5, -1), x)
    assert torch.allclose(got, sampling.coupled_joint(p, q) / p, atol=1e-6)
    one = torch.nn.functional.one_hot(torch.tensor([2]), 5).float()
    assert torch.allclose(sampling.coupled_accept(one, q[None], torch.tensor([2])), q[2:3])   # a point mass: q(x)


def output_law(p: torch.Tensor, q: torch.Tensor, c: torch.Tensor) -> np.ndarray:
    """The exact law of the committed token when x = race(p), x* = race(q) share E and a miss x != x* is accepted
    with probability c(x), else x* is committed."""
    j = exact_joint(p, q)
    c = c.double().numpy()
    off = j - np.diag(np.diag(j))
    return np.diag(j) + (off * (1 - c)[:, None]).sum(0) + c * off.sum(1)


def csd_rows(q: torch.Tensor, p: torch.Tensor, lam: float) -> torch.Tensor:
    return rules.csd(q[None], p[None], torch.tensor([lam]), torch.tensor([0.0]), 1.0)


def test_change_prob_is_p_of_change_and_bounds_the_exact_tv():
    """The recorded cost Σ_v c_v (p_v - J_v) = P(committed != x*) of the exact joint, >= TV(o, q) of the exact output
    law, and = TV(o, q) for a point-mass draft."""
    for s in range(4):
        p, q = laws(s)
        a = csd_rows(q, p, 0.3)[0]
        c = relax_excess(a, rules.lossless(q[None], p[None])[0])
        j = exact_joint(p, q)
        change = float((c.double().numpy() * (p.double().numpy() - np.diag(j))).sum())
        got, exact = sampling.change_prob(p[None], q[None], c[None])
        assert bool(exact[0]) and abs(float(got[0]) - change) < 1e-5
        o = output_law(p, q, c)
        assert abs(o.sum() - 1) < 1e-6
        assert 0.5 * np.abs(o - q.double().numpy()).sum() <= float(got[0]) + 1e-6
    one = torch.nn.functional.one_hot(torch.tensor(1), 5).float()
    c = relax_excess(csd_rows(q, one, 0.3)[0], rules.lossless(q[None], one[None])[0])
    o = output_law(one, q, c)
    got = float(sampling.change_prob(one[None], q[None], c[None])[0][0])
    assert abs(0.5 * np.abs(o - q.double().numpy()).sum() - got) < 1e-6


def test_change_prob_tail_bound_is_an_upper_bound(monkeypatch):
    """Past the cap, the lower bound on J keeps the value above the exact one."""
    p, q = laws(5, v=8)
    c = torch.full((1, 8), 0.4)
    exact, _ = sampling.change_prob(p[None], q[None], c)
    monkeypatch.setattr(sampling, "_JOINT_FLOATS", 8)                # one exact row, the rest bounded
    loose, flag = sampling.change_prob(p[None], q[None], c)
    assert not bool(flag[0]) and float(loose[0]) >= float(exact[0]) - 1e-7


def test_keyed_chain_output_law_matches_the_exact_law():
    """One judged slot of keyed_chain over 4000 seeds: the committed token's law is the exact output law of the
    coupled rule (χ²), and the recorded cost is P(change)."""
    p, q = laws(1)
    fn = (lambda qq, pp: rules.csd(qq, pp, torch.full((len(qq),), 0.3), torch.zeros(len(qq)), 1.0))
    c = relax_excess(fn(q[None], p[None])[0], rules.lossless(q[None], p[None])[0])
    o = output_law(p, q, c)
    got = []
    for seed in range(4000):
        noise = keyed.Noise(seed, 5)
        x = torch.tensor([noise.race(0, p)])
        res = keyed.keyed_chain(torch.stack([q, q]), p[None], x, fn, noise, 0, bonus_ok=False)
        got.append(int(x[0]) if res.accepted else res.new_token)
    obs = np.bincount(got, minlength=5)
    assert chi2(obs, o) > 1e-3
    assert abs(float(res.j.tv_cost[0]) - float(sampling.change_prob(p[None], q[None], c[None])[0][0])) < 1e-6


def test_lossless_keyed_chain_commits_the_race_sample():
    """Under the lossless rule a slot is accepted iff the draft is the target's race sample, else that sample is
    committed: the committed token is x* whatever the draft."""
    p, q = laws(2)
    for seed in range(50):
        noise = keyed.Noise(seed, 5)
        star = noise.race(0, q)
        for x in range(5):
            res = keyed.keyed_chain(torch.stack([q, q]), p[None], torch.tensor([x]), rules.lossless, noise, 0, False)
            assert (res.accepted == 1) == (x == star)
            assert (x if res.accepted else res.new_token) == star
            assert float(res.j.tv_cost[0]) == 0.0 and res.target == [star]


def test_keyed_tree_level_law_matches_its_recorded_cost():
    """A level of two point-mass siblings (tokens 1, 3) under a relaxed rule (b = min(1, q(x) + 0.3)) over 4000
    seeds: the committed token's law is o(y) = q_y + (1 - Q_K) c_j Π_{i<j} (1 - c_i) on the siblings and
    q_y Π_j (1 - c_j) elsewhere (χ²), and the recorded cost is TV(o, q) exactly."""
    from specviz.engine.drafters.draft_tree import DraftTree
    _, q = laws(4)
    tree = DraftTree([0, 1, 3], [-1, 0, 0], [0, 1, 1], [None, None, None])
    qs = torch.stack([q, q, q])

    def fn(qq, pp):
        return rules.csd(qq, pp, torch.full((len(qq),), 0.3), torch.zeros(len(qq)), 1.0)
    kids = [1, 3]
    c = [(min(1.0, float(q[x]) + 0.3) - float(q[x])) / (1 - float(q[x])) for x in kids]
    rest = (1 - c[0]) * (1 - c[1])
    o = q.double().numpy() * rest
    miss = 1 - float(q[1] + q[3])
    o[1], o[3] = float(q[1]) + miss * c[0], float(q[3]) + miss * (1 - c[0]) * c[1]
    got, costs = [], set()
    for seed in range(4000):
        walk = keyed.keyed_tree(tree, qs, fn, keyed.Noise(seed, 5), 0, None, 0.0, lambda d: False)
        got.append(tree.tokens[walk.path[-1]] if len(walk.path) > 1 else walk.new_token)
        costs.add(round(walk.judged[0].tv_cost, 6))
    assert chi2(np.bincount(got, minlength=5), o) > 1e-3
    assert len(costs) == 1 and abs(costs.pop() - 0.5 * np.abs(o - q.double().numpy()).sum()) < 1e-5
