"""Mutation-check variants for GSD's acceptance at the drafts alone (engine/gsd_sorted.window_at, protocol:
tests/support/mutants.py): its window must be the one the full rows' sorted ranking gives."""
from __future__ import annotations

import torch

from specviz.engine import gsd_sorted
from tests.engine.test_gsd_sorted import window_cells_equal_the_full_rows
from tests.support.mutants import Mutant


def _ties_by_larger_code(q):
    """Wrong: tied target masses ranked by the larger code first (the stable sort ranks the smaller first)."""
    return (q.float().contiguous().view(torch.int32).long() << 32) | torch.arange(q.shape[-1])


def _not_slid(r, V, group):
    """Wrong: the window at the top of the ranking not slid inside (lo = r - G//2 may be negative)."""
    return (r - group // 2).clamp(max=V - group)


VARIANTS = [
    Mutant("GSD's window at the drafts ranks tied masses by the larger code first",
           lambda mp: mp.setattr(gsd_sorted, "rank_key", _ties_by_larger_code), (window_cells_equal_the_full_rows,)),
    Mutant("GSD's window at the drafts is not slid inside the ranking at its top",
           lambda mp: mp.setattr(gsd_sorted, "window_lo", _not_slid), (window_cells_equal_the_full_rows,)),
]
