"""The keyed chain's cost without (H, V) work or reads (core/sampling.change_prob, joint_at) and CSD's acceptance at
the drafts (rules.csd_at): each against its direct definition."""
import pytest
import torch

from specviz.core import sampling
from specviz.engine import rules
from specviz.engine.syncs import HostReads


def direct_joint(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """J_v = 1 / Σ_w max(p_w/p_v, q_w/q_v) by its definition, float64, (V, V) work a row (0 where p_v q_v = 0)."""
    pd, qd = p.double(), q.double()
    s = torch.maximum(pd[..., None, :] / pd.clamp_min(1e-300)[..., :, None],
                      qd[..., None, :] / qd.clamp_min(1e-300)[..., :, None]).sum(-1)
    return torch.where((p > 0) & (q > 0), 1.0 / s, 0.0)


def rows(seed: int, v: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Three rows: a law with zeros in p, one with zeros in q, and one where q = p on half the codes (ties of q/p)."""
    g = torch.Generator().manual_seed(seed)
    p, q = torch.rand(3, v, generator=g) ** 3, torch.rand(3, v, generator=g) ** 3
    p[0, : v // 3] = 0
    q[1, v // 2:] = 0
    q[2, : v // 2] = p[2, : v // 2]
    return p / p.sum(-1, keepdim=True), q / q.sum(-1, keepdim=True), torch.rand(3, v, generator=g)


@pytest.mark.parametrize("seed", range(4))
def test_joint_at_equals_the_definition_at_every_code(seed):
    p, q, _ = rows(seed, 97)
    idx = torch.arange(97).expand(3, 97).contiguous()
    want = direct_joint(p, q)
    got = torch.where((p > 0) & (q > 0), sampling.joint_at(p, q, idx), 0.0)
    assert torch.allclose(got.double(), want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("cap", [1 << 20, 40 * 97])
def test_change_prob_is_the_definition_with_its_head_and_tail(cap, monkeypatch):
    """Σ_v c_v (p_v - J_v) over the cap's heaviest members of S = {c p > 0} plus the tail's bound terms, every row at
    once, without a read; the flag says whether any member was bounded."""
    monkeypatch.setattr(sampling, "_JOINT_FLOATS", cap)
    p, q, c = rows(7, 97)
    c[1] = torch.where(c[1] > 0.5, c[1], 0.0)
    with HostReads() as h:
        got, exact = sampling.change_prob(p, q, c)
    assert h.count == 0
    width, j = max(1, cap // 97), direct_joint(p, q)
    for r in range(3):
        s = ((c[r] > 0) & (p[r] > 0)).nonzero().squeeze(-1)
        s = s[p[r, s].argsort(descending=True)]
        head, tail = s[:width], s[width:]
        pd, qd, cd = p[r].double(), q[r].double(), c[r].double()
        want = (cd[head] * (pd[head] - j[r, head]).clamp_min(0)).sum() + \
            (cd[tail] * (pd[tail] - pd[tail] * qd[tail] / (pd[tail] + qd[tail])).clamp_min(0)).sum()
        assert abs(float(got[r]) - float(want)) < 1e-6 and bool(exact[r]) == (len(tail) == 0)
    assert bool(exact.all()) == (cap == 1 << 20)


def test_csd_at_the_drafts_is_the_rows_value_to_the_bit():
    g = torch.Generator().manual_seed(3)
    q = torch.rand(6, 50, generator=g).softmax(-1)
    p = torch.rand(6, 50, generator=g).softmax(-1)
    p[2] = torch.nn.functional.one_hot(torch.tensor(4), 50).float()
    x = torch.tensor([0, 7, 4, 49, 13, 4])
    p[5, 4] = 0.0                                               # a draft its law never proposes: 1
    relax, d = torch.rand(6, generator=g), torch.rand(6, generator=g)
    full = rules.csd(q, p, relax, d, 0.5)
    assert torch.equal(rules.csd_at(q, p, x, relax, d, 0.5), full[torch.arange(6), x])
