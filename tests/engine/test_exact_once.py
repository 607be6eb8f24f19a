"""min(1, q(x)/p(x)) at a draft is written once (core/sampling.exact_at) and gives one answer at p(x) = 0 wherever the
engine or the re-scoring uses it: the chain judge, a tree level's walk, keyed noise's level, the Jacobi drafters'
coupling (its keep probability) and the preview's rescore.exact_prob (before, the re-scoring answered 1 there and the
engine 0)."""
import torch

from specviz.core import sampling
from specviz.core.records import TokenEvent
from specviz.engine import keyed, rescore, rules, verify
from specviz.engine.drafters import jacobi


def answers_at_p_zero() -> list:
    q = torch.tensor([0.5, 0.3, 0.2, 0.0])
    p = torch.tensor([0.0, 0.6, 0.4, 0.0])                   # the draft x = 0 has p(x) = 0
    judged = float(rules.judge(q[None], p[None], rules.lossless(q[None], p[None]), torch.tensor([0]),
                               torch.tensor([0.5])).exact_prob[0])
    level = verify.level_law(q, [p], [0], lambda j, r, law: (rules.lossless(r[None], law[None])[0], 0.0))
    keyed_level = keyed._level(q, [p], [0], (rules.lossless(q[None], p[None]), [0.0]))
    ev = TokenEvent(pos=0, token=0, decision="rejected", p_draft=0.0, p_target=0.5)
    keep, _ = jacobi.coupling(torch.tensor([0]), p[None], q[None])   # a draft its old law never proposed
    return [judged, level.exact[0], float(keyed_level.exact[0]), rescore.exact_prob(ev), float(keep[0])]


def test_exact_probability_at_p_zero_has_one_answer():
    assert answers_at_p_zero() == [0.0, 0.0, 0.0, 0.0, 0.0]


def test_exact_probability_is_min_one_q_over_p():
    q, p = torch.tensor([0.2, 0.5, 0.3]), torch.tensor([0.4, 0.25, 0.35])
    assert torch.allclose(sampling.exact_at(p, q), torch.tensor([0.5, 1.0, 0.3 / 0.35]))
    ev = TokenEvent(pos=0, token=0, decision="exact", p_draft=0.4, p_target=0.2)
    assert abs(rescore.exact_prob(ev) - 0.5) < 1e-12
    assert torch.equal(rules.lossless(q[None], torch.tensor([[0.0, 1.0, 0.0]]))[0], torch.tensor([1.0, 0.5, 1.0]))
