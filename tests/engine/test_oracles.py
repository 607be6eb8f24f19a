"""Our reproduction modes against literal ports of the released code (tests/support/oracles.py) on random laws and
edge cases
(docs/methods.md §8.3)."""
import pytest
import torch

from specviz.core.sampling import safe_norm
from specviz.engine import rules
from tests.support import oracles


def random_case(seed: int, v: int, top_k: int = 0, sharp: float = 2.0):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(v, generator=g) * sharp
    if top_k:
        logits = logits.masked_fill(logits < logits.topk(top_k).values[-1], float("-inf"))
    q = logits.softmax(-1)
    soft = (torch.randn(v, generator=g) * sharp).softmax(-1)
    one_hot = rules.point_mass(torch.randint(v, (1,), generator=g), v)[0]
    return g, logits, q, (soft, one_hot)


def test_sjd_matches_released():
    for seed in range(20):
        _, _, q, drafts = random_case(seed, 16, top_k=8 if seed % 2 else 0)
        for p in drafts:
            a = rules.lossless(q[None], p[None])
            for x in p.nonzero().squeeze(-1).tolist():
                j = rules.judge(q[None], p[None], a, torch.tensor([x]), torch.zeros(1))
                assert abs(float(j.accept_prob[0]) - oracles.sjd_accept(q, p, x)) < 1e-6
                want = oracles.sjd_residual(q, p)
                if not torch.isnan(want).any():                       # released: NaN when [q - p]+ is all zero
                    assert torch.allclose(j.residual[0], want, atol=1e-6)


@pytest.mark.parametrize("v,group,top_k", [(24, 14, 0), (24, 14, 10), (30, 8, 0), (12, 14, 0), (9, 6, 5)])
def test_gsd_released_matches_oracle(v, group, top_k):
    """Window placement (incl. Python's negative-start slicing and empty slices), both filters, the ratio, the
    lossless fallback and the NaN ratio, and the plain residual."""
    for seed in range(12):
        g, logits, q, drafts = random_case(seed, v, top_k)
        emb = torch.randn(v, 4, generator=g) * 0.3
        sims = oracles.gsd_sims(emb)
        gap, dist = (0.15, 0.5) if seed % 3 else (0.05, 0.2)
        for p in drafts:
            a = rules.gsd(q[None], p[None], emb, group, gap, dist, "released")[0]
            for x in p.nonzero().squeeze(-1).tolist():
                want = oracles.gsd_accept(logits, q, p, x, sims, gap, dist, group // 2, group - group // 2)
                assert abs(float(a[x]) - want) < 1e-5, (seed, x, float(a[x]), want)
            res = safe_norm(rules.plain_residual(q[None], p[None], a[None], None), q[None])[0][0]
            want = oracles.gsd_residual(q, p)
            if not torch.isnan(want).any():
                assert torch.allclose(res, want, atol=1e-6)


def neighbour_table(v: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    rows = []
    for i in range(v):
        others = torch.tensor([j for j in range(v) if j != i])
        rows.append(others[torch.randperm(v - 1, generator=g)])
    return torch.stack(rows)


@pytest.mark.parametrize("variant", ["lumina", "llamagen"])
@pytest.mark.parametrize("delta", [0.05, 0.3, 1.0, 4.0, 20.0])      # > 1: LANTERN++'s λ, as the released code reads it
def test_lantern_matches_released(variant, delta):
    """Acceptance px/qx and the rejection residual of one candidate, EAGLE-2 (point mass) and EAGLE-1 (a law)."""
    v, k = 16, 4
    nbrs = neighbour_table(v, 1)
    lam = delta if delta > 1 else None
    for seed in range(10):
        _, _, q, drafts = random_case(seed, v, top_k=6 if seed % 2 else 0, sharp=1.0 + seed % 3)
        if seed == 9:                                                 # x and its neighbourhood hold all the mass
            q = torch.zeros(v)
            q[[0, *nbrs[0, :3].tolist()]] = torch.tensor([0.4, 0.3, 0.2, 0.1])
            drafts = (drafts[0], rules.point_mass(torch.tensor([0]), v)[0])

        def budget(qq):
            return rules.lantern_budget(qq, delta, lam)
        res_fn = rules.lantern_residual(nbrs, k, budget, variant)
        for p in drafts:
            point = float(p.max()) == 1.0
            a = rules.lantern(q[None], p[None], nbrs, k, budget(q[None]))
            for x in p.nonzero().squeeze(-1).tolist():
                px, idx = oracles.lantern_px(q, x, nbrs, k, delta)
                qx = 1.0 if point else float(p[x])
                assert abs(float(a[0, x]) - min(1.0, px / qx)) < 1e-6
                got = safe_norm(res_fn(q[None], p[None], a, torch.tensor([x])), q[None])[0][0]
                want = oracles.lantern_reject(q, x, None if point else p, idx, nbrs, k, variant)
                assert torch.allclose(got, want, atol=1e-6), (seed, x, variant)


def test_lantern_variants_differ_only_on_sampled_drafts():
    """With point masses both released variants zero x and its neighbourhood in the target; with a sampled draft
    llamagen zeroes the neighbourhood in the draft law instead, so the target keeps its neighbours' mass."""
    v, k = 8, 2
    nbrs = neighbour_table(v, 3)
    q = torch.full((v,), 1 / v)
    lum = rules.lantern_residual(nbrs, k, lambda qq: 0.5, "lumina")
    lla = rules.lantern_residual(nbrs, k, lambda qq: 0.5, "llamagen")
    pm = rules.point_mass(torch.tensor([0]), v)
    a = torch.zeros(1, v)
    assert torch.equal(lum(q[None], pm, a, torch.tensor([0])), lla(q[None], pm, a, torch.tensor([0])))
    zeroed = nbrs[0, :k + 1]
    p = torch.zeros(1, v)
    p[0, 0] = 0.5
    p[0, zeroed] = 0.5 / (k + 1)                                      # the draft law also proposes the neighbours
    assert float(lum(q[None], p, a, torch.tensor([0]))[0, zeroed].sum()) == 0.0
    assert float(lum(q[None], p, a, torch.tensor([0])).sum()) == pytest.approx(0.5)      # the 4 other codes
    assert float(lla(q[None], p, a, torch.tensor([0]))[0, zeroed].sum()) == pytest.approx(float(q[zeroed].sum()))
