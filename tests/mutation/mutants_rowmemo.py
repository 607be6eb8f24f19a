"""Mutation-check variants for the per-row memo of a law's numbers (core/rowmemo.py) and the entropy it is offered
from the logits (core/sampling.entropy_from_logits)."""
from __future__ import annotations

import torch

from specviz.core import rowmemo, sampling
from tests.engine.test_rowmemo import (
    a_changed_or_other_law_is_not_answered_from_memory,
    answers_from_memory_equal_fresh_ones,
    each_thread_has_its_own_memo,
    entropy_from_logits_is_close_at_a_real_vocabulary,
    offered_entropy_is_made_for_the_rows_asked,
)
from tests.support.mutants import Mutant

_real_shape, _real_block, _real_rows = rowmemo._shape, rowmemo._block, rowmemo.Offered.rows
_shared: list = []


def _no_version(t):
    """Wrong: a law is recognised without its version counter (an in-place write is answered from memory)."""
    s = _real_shape(t)
    return None if s is None else s[:3] + (0,) + s[4:]


def _from_row_zero(entry_shapes, shapes):
    """Wrong: a block of rows is answered from the remembered rows' start."""
    block = _real_block(entry_shapes, shapes)
    return None if block is None else (0, block[1])


def _every_row(self, r0, n):
    """Wrong: the offered entropy is made for every row at the first ask."""
    _real_rows(self, 0, len(self.known))
    return _real_rows(self, r0, n)


def _sum_one(q, logits, temperature=1.0):
    """Wrong: H = -log q* - Σ q (z - z*), as if the float32 law summed to 1."""
    z = logits / temperature if temperature != 1.0 else logits
    return -q.amax(-1).log() - torch.linalg.vecdot(q, z - z.amax(-1, keepdim=True))


VARIANTS = [
    Mutant("the row memo ignores a law's version counter", lambda mp: mp.setattr(rowmemo, "_shape", _no_version),
           (a_changed_or_other_law_is_not_answered_from_memory,)),
    Mutant("the row memo answers a block from the first remembered row",
           lambda mp: mp.setattr(rowmemo, "_block", _from_row_zero), (answers_from_memory_equal_fresh_ones,)),
    Mutant("the offered entropy is made for every row", lambda mp: mp.setattr(rowmemo.Offered, "rows", _every_row),
           (offered_entropy_is_made_for_the_rows_asked,)),
    Mutant("the entropy from the logits assumes the law sums to 1",
           lambda mp: mp.setattr(sampling, "entropy_from_logits", _sum_one),
           (entropy_from_logits_is_close_at_a_real_vocabulary,)),
    Mutant("the row memo is shared by every thread", lambda mp: mp.setattr(rowmemo, "_entries", lambda: _shared),
           (each_thread_has_its_own_memo,)),
]
