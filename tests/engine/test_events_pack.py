"""A chain step's packed record (events._stacked): every field's value comes back exactly, whether the fields are
stacked in float32 (the usual case) or must be widened first (a float64 number, a token past float32's integers)."""
import torch

from specviz.engine import events


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
