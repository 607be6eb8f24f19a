"""Mutation-check variants for a chain step's packed record (events._stacked: the fields stacked once)."""
from __future__ import annotations

import torch

from specviz.engine import events
from tests.engine.test_events_pack import (
    a_float64_number_or_a_token_past_2_24_is_not_rounded_through_float32,
    chain_events_carry_their_positions_laws,
    float32_fields_tokens_and_flags_come_back_exactly,
)
from tests.support.mutants import Mutant


def _always_float32(fields, vocab):
    """Wrong: every field through float32, whatever its dtype or the vocabulary."""
    return torch.stack([f.to(torch.float32) for f in fields]).view(-1).to(torch.float64)


def _float64_only(fields, vocab):
    """Wrong: a float64 field still narrows the stack (only the vocabulary is looked at)."""
    wide = torch.float32 if vocab <= 1 << 24 else torch.float64
    return torch.stack([f.to(wide) for f in fields]).view(-1).to(torch.float64)


def _by_slot(fields, vocab):
    """Wrong: slot after slot instead of field after field."""
    return torch.stack([f.to(torch.float64) for f in fields], dim=1).reshape(-1)


class _FirstRow:
    """Wrong: entropy() answers every one-law call with the first row of the step's laws (a bonus token's law read
    at the window's start)."""

    def __init__(self, real):
        self.real = real

    def __call__(self, q, norm="raw"):
        if q.dim() == 1 and q._base is not None:             # a row of the step's (k + 1, V) laws
            q = q._base[0]
        return self.real(q, norm)


VARIANTS = [
    Mutant("the packed record always goes through float32", lambda mp: mp.setattr(events, "_stacked", _always_float32),
           (a_float64_number_or_a_token_past_2_24_is_not_rounded_through_float32,)),
    Mutant("a float64 field is narrowed", lambda mp: mp.setattr(events, "_stacked", _float64_only),
           (a_float64_number_or_a_token_past_2_24_is_not_rounded_through_float32,)),
    Mutant("the packed record is slot-major", lambda mp: mp.setattr(events, "_stacked", _by_slot),
           (float32_fields_tokens_and_flags_come_back_exactly,)),
    Mutant("a bonus token's entropy is the window's first row's",
           lambda mp: mp.setattr(events, "entropy", _FirstRow(events.entropy)),
           (chain_events_carry_their_positions_laws,)),
]
