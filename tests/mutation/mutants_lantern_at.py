"""Plausible wrong variants of LANTERN's rule at the drafts alone (rules.lantern_at, the record's `at`: the tree walks
ask it per point-mass sibling), each with the tests that must catch it (protocol: tests/support/mutants.py)."""
from __future__ import annotations

import torch

from specviz.engine import rules
from tests.engine.test_lantern_cells import check_at_equals_the_rows_at_the_drafts
from tests.support.mutants import Mutant


def _variant(strict: bool = False, width: int | None = None, own_budget: bool = True):
    """lantern_at with one line wrong: strict (the budget compared with <, not <=), width (the neighbour table's
    whole width read, not k), own_budget False (B taken at the first neighbour's cell, not the draft's)."""
    def at(p_target, p_draft, x, neighbours, k, budget_fn):
        rows = torch.arange(len(x), device=x.device)
        qx, px = p_target[rows, x], p_draft[rows, x]
        nb = neighbours[x, :k] if width is None else neighbours[x]
        cs = p_target[rows[:, None], nb].cumsum(-1)
        b = budget_fn(qx if own_budget else p_target[rows, nb[:, 0]])
        b = b[:, None] if torch.is_tensor(b) else b
        moved = torch.where(cs < b if strict else cs <= b, cs, torch.zeros_like(cs)).amax(-1)
        return torch.where(px > 0, ((qx + moved) / px.clamp_min(1e-30)).clamp(max=1.0), 1.0)
    return at


VARIANTS = [
    Mutant("LANTERN at the drafts: the budget compared strictly (s_m < B)",
           lambda mp: mp.setattr(rules, "lantern_at", _variant(strict=True)),
           (check_at_equals_the_rows_at_the_drafts,)),
    Mutant("LANTERN at the drafts: every neighbour in the table summed (k ignored)",
           lambda mp: mp.setattr(rules, "lantern_at", _variant(width=-1)),
           (check_at_equals_the_rows_at_the_drafts,)),
    Mutant("LANTERN++ at the drafts: B taken at the nearest neighbour's cell, not the draft's",
           lambda mp: mp.setattr(rules, "lantern_at", _variant(own_budget=False)),
           (check_at_equals_the_rows_at_the_drafts,)),
]
