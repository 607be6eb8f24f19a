"""Closed-form checks of the pure rules (docs/methods.md §1, §3-5, §8)."""
import torch

from specviz.core.sampling import entropy, point_masses, safe_norm, sample, target_probs, tv
from specviz.engine import rules
from specviz.engine.drafters.jacobi import JacobiDrafter


def laws(n=6, v=10, seed=0, sharp=2.0):
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(n, v, generator=g) * sharp).softmax(-1)
    p = (torch.randn(n, v, generator=g) * sharp).softmax(-1)
    return q, p


def test_lossless_is_min_ratio_and_residual_is_plain():
    q, p = laws()
    a = rules.lossless(q, p)
    assert torch.allclose(a, (q / p).clamp(max=1))
    x = torch.zeros(len(q), dtype=torch.long)
    j = rules.judge(q, p, a, x, torch.full((len(q),), 0.5))
    plain, _ = safe_norm((q - p).clamp_min(0), q)
    assert torch.allclose(j.residual, plain, atol=1e-6)
    assert j.tv_cost.abs().max() < 1e-6                        # lossless output law is exactly q


def test_output_law_of_judge_is_q_for_lossless():
    q, p = laws(n=1, v=5)
    a = rules.lossless(q, p)
    out = p * a + (1 - (p * a).sum(-1, keepdim=True)) * rules.judge(q, p, a, torch.tensor([0]), torch.zeros(1)).residual
    assert torch.allclose(out, q, atol=1e-6)


def test_csd_cost_bound_and_zero_lambda():
    q, p = laws(n=50, v=12, seed=3, sharp=1.0)
    h = entropy(q, "vocab")
    assert torch.equal(rules.csd(q, p, 0 * h, tv(p, q), 1.0), rules.lossless(q, p))
    for lam, delta in ((0.1, 0.5), (0.3, 0.9), (1.0, 0.2)):
        a = rules.csd(q, p, lam * h, tv(p, q), delta)
        assert (a >= rules.lossless(q, p) - 1e-7).all()           # relaxes upward only
        x = torch.zeros(len(q), dtype=torch.long)
        cost = rules.judge(q, p, a, x, torch.zeros(len(q))).tv_cost
        gate = tv(p, q) < delta
        assert (cost[~gate] < 1e-6).all()
        assert (cost <= torch.minimum(torch.full_like(h, delta), lam * h) + 1e-6).all()
        # the exact output law's TV to q equals the recorded cost (P4)
        j = rules.judge(q, p, a, x, torch.zeros(len(q)))
        out = p * a + (1 - (p * a).sum(-1, keepdim=True)) * j.residual
        assert torch.allclose(tv(out, q), cost, atol=1e-5)


def test_lantern_moves_at_most_delta():
    q, _ = laws(n=8, v=16, seed=5, sharp=0.5)
    nbrs = torch.stack([torch.tensor([(i + d) % 16 for d in range(1, 6)]) for i in range(16)])
    for delta in (0.0, 0.05, 0.2):
        moved = rules.lantern_mass(q, nbrs, 5, delta) - q
        assert (moved <= delta + 1e-7).all() and (moved >= 0).all()
    assert torch.equal(rules.lantern_mass(q, nbrs, 5, 0.0), q)


def test_gsd_point_mass_accepts_group_mass():
    q = torch.tensor([[0.30, 0.25, 0.20, 0.15, 0.10]])
    vecs = torch.zeros(5, 2)                                      # all codes at one point: distance filter passes
    p = rules.point_mass(torch.tensor([1]), 5)
    a = rules.gsd(q, p, vecs, group=3, gap=1.0, dist=1.0)
    # x = code 1 (rank 1); window ranks 0..2 -> codes 0,1,2
    assert abs(float(a[0, 1]) - 0.75) < 1e-6
    a = rules.gsd(q, p, vecs, group=3, gap=0.01, dist=1.0)        # probability-gap filter removes everything
    assert abs(float(a[0, 1]) - 0.25) < 1e-6


def test_cascade_scaled_group_mass_and_no_group():
    """q_R(x) = q(x) + s·Σ q(t) over the distinct other member tokens (each once; x itself never counts)."""
    q = torch.tensor([0.4, 0.3, 0.2, 0.1])
    p = rules.point_mass(torch.tensor([1]), 4)[0]
    a, extra = rules.cascade(q, p, 1, [0, 2, 2, 1])
    assert abs(extra - 0.6) < 1e-6 and abs(float(a[1]) - 0.9) < 1e-6
    a, extra = rules.cascade(q, p, 1, [0, 2], scale=0.25)
    assert abs(extra - 0.15) < 1e-6 and abs(float(a[1]) - 0.45) < 1e-6
    a, extra = rules.cascade(q, p, 1, [])
    assert extra == 0 and torch.equal(a, rules.lossless(q[None], p[None])[0])


def test_residual_edge_cases():
    q = torch.tensor([[0.5, 0.5, 0.0]])
    # q == p: accept with probability 1
    j = rules.judge(q, q.clone(), rules.lossless(q, q), torch.tensor([0]), torch.tensor([0.999]))
    assert bool(j.accepted[0])
    # p one-hot outside supp(q): never accepted, residual = q
    p = rules.point_mass(torch.tensor([2]), 3)
    j = rules.judge(q, p, rules.lossless(q, p), torch.tensor([2]), torch.tensor([0.0]))
    assert not bool(j.accepted[0]) and torch.allclose(j.residual, q)
    # empty residual falls back to q and is flagged
    r, empty = safe_norm(torch.zeros(1, 3), q)
    assert bool(empty[0]) and torch.equal(r, q)
    # p(x) = 0: exact prob 0, a draft there is never accepted by the lossless rule
    p = torch.tensor([[0.0, 1.0, 0.0]])
    j = rules.judge(q, p, rules.lossless(q, p), torch.tensor([0]), torch.tensor([0.5]))
    assert float(j.exact_prob[0]) == 0.0
    # one-hot q: residual after rejecting another token is that one-hot
    q1 = torch.tensor([[0.0, 1.0, 0.0]])
    p = rules.point_mass(torch.tensor([0]), 3)
    j = rules.judge(q1, p, rules.lossless(q1, p), torch.tensor([0]), torch.tensor([0.0]))
    assert torch.equal(j.residual, q1)


def test_sampling_pipeline():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    assert torch.equal(target_probs(logits, 0.0), torch.tensor([[1.0, 0, 0, 0]]))
    p = target_probs(logits, 1.0, top_k=2)
    assert (p[0, 2:] == 0).all() and abs(float(p.sum()) - 1) < 1e-6
    p = target_probs(logits, 1.0, top_p=0.5)
    assert float(p[0, 0]) == 1.0
    g = torch.Generator().manual_seed(0)
    draws = torch.stack([sample(torch.tensor([0.0, 0.25, 0.75]), g) for _ in range(4000)])
    assert (draws != 0).all() and abs(float((draws == 2).float().mean()) - 0.75) < 0.03
    assert abs(float(entropy(torch.full((1, 4), 0.25), "vocab")) - 1.0) < 1e-6


def test_point_masses_are_one_hot_laws():
    """The scatter-built point masses equal one_hot's float rows, for 1-d and 2-d token tensors; the chain's law
    rows take them after the refined rows."""
    x = torch.tensor([3, 0, 7, 7])
    assert torch.equal(point_masses(x, 9), torch.nn.functional.one_hot(x, 9).float())
    assert point_masses(x, 9).dtype == torch.float32
    assert torch.equal(point_masses(x.view(2, 2), 9), torch.nn.functional.one_hot(x.view(2, 2), 9).float())
    d = JacobiDrafter(4, 9, (3, 3), "random", None)
    p = torch.full((2, 9), 1 / 9)
    laws = d._law_rows(x[:3], p)
    assert torch.equal(laws, torch.cat([p, torch.nn.functional.one_hot(x[2:3], 9).float()]))
    assert torch.equal(d._law_rows(x[:2], p), p)                 # every slot refined: p's rows
