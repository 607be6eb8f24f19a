"""A chain step's packed record (events._stacked): every field's value comes back exactly, whether the fields are
stacked in float32 (the usual case) or must be widened first (a float64 number, a token past float32's integers);
and each chain event carries its own position's law's numbers."""
import math

import torch

from specviz.core.sampling import entropy, target_probs
from specviz.engine import events
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from specviz.engine.stub import StubTarget, stub_factory


def float32_fields_tokens_and_flags_come_back_exactly():
    f = [torch.tensor([0.1, 0.7]), torch.tensor([True, False]), torch.tensor([16383, 5]), torch.tensor([1e-30, 1.0])]
    out = events._stacked(f, 16384)
    assert out.dtype == torch.float64
    assert out.tolist() == [float(torch.tensor(0.1)), float(torch.tensor(0.7)), 1.0, 0.0, 16383.0, 5.0,
                            float(torch.tensor(1e-30)), 1.0]


def a_float64_number_or_a_token_past_2_24_is_not_rounded_through_float32():
    x = events._stacked([torch.tensor([0.1], dtype=torch.float64), torch.tensor([0.5])], 16384)
    assert x.tolist() == [0.1, 0.5]                               # float32 would give 0.10000000149011612
    big = (1 << 24) + 1                                           # not a float32 integer
    assert events._stacked([torch.tensor([big]), torch.tensor([0.25])], big + 1).tolist() == [float(big), 0.25]


def test_float32_fields_tokens_and_flags_come_back_exactly():
    float32_fields_tokens_and_flags_come_back_exactly()


def test_a_float64_number_or_a_token_past_2_24_is_not_rounded_through_float32():
    a_float64_number_or_a_token_past_2_24_is_not_rounded_through_float32()


def chain_events_carry_their_positions_laws() -> None:
    """Every event of a Jacobi run on the stub target (whose law at position t is a table row picked by the committed
    token at t - 1) carries q(token), H(q) and H normalised of its own position's law: judged drafts, the resampled
    token (its row is a judged one) and the bonus token (a row past them), for both noises."""
    seen = set()
    for method, noise in (("sjd", "papers"), ("csd", "papers"), ("sjd", "keyed"), ("csd", "keyed")):
        model = StubTarget(64, (6, 6), sharpness=1.0)
        cfg = RunConfig(method=method, prompt="stub", noise=noise, seed=3)
        trace = drain(decode(model, cfg, stub_factory)).trace
        toks = trace.tokens
        for s in trace.steps:
            for e in s.events:
                if e.pos == 0:
                    continue
                q = target_probs(model.table[model._rows(torch.tensor(toks[e.pos - 1]), torch.tensor(e.pos - 1))])
                assert math.isclose(e.p_target, float(q[e.token]), rel_tol=1e-6, abs_tol=1e-9)
                assert math.isclose(e.entropy, float(entropy(q)), rel_tol=1e-5)
                assert math.isclose(e.entropy_norm, float(entropy(q, cfg.h_norm)), rel_tol=1e-5)
                seen.add(e.decision)
    assert {"exact", "rejected", "resampled", "bonus"} <= seen, seen


def test_chain_events_carry_their_positions_laws():
    chain_events_carry_their_positions_laws()
