"""Mutation-check variants for the primer's walk (protocol: tests/support/mutants.py)."""
from __future__ import annotations

from dataclasses import replace

from specviz.render import primer
from tests.render.test_primer import keyed_stage_names_ar_only_where_true, walk_says_the_recorded_numbers
from tests.support.mutants import Mutant


def _row_col_swapped(trace, pos: int) -> str:
    """Wrong: the column first (the raster is row-major: pos = row · W + column)."""
    c, r = divmod(pos, trace.grid[1])
    return f"position {pos} (row {r}, column {c})"


def _groups_swapped(trace, ev) -> str:
    """Wrong: the convergent count said as the interchangeable one (and back)."""
    g = ev.groups
    return _GROUPS(trace, replace(ev, groups=replace(g, interchangeable=g.convergent, convergent=g.interchangeable)))


_GROUPS = primer._groups

VARIANTS = [
    Mutant("primer-forgets-rejected-drafts-were-judged",
           lambda mp: mp.setattr(primer, "JUDGED", ("exact", "relaxed")), (walk_says_the_recorded_numbers,)),
    Mutant("primer-row-and-column-swapped", lambda mp: mp.setattr(primer, "_where", _row_col_swapped),
           (walk_says_the_recorded_numbers,)),
    Mutant("primer-rounds-unlike-the-inspector",
           lambda mp: mp.setattr(primer, "num", lambda v, digits=4: f"{v:.3g}"), (walk_says_the_recorded_numbers,)),
    Mutant("primer-keyed-says-ars-token-after-the-first-change",
           lambda mp: mp.setattr(primer, "first_change", lambda trace: None), (keyed_stage_names_ar_only_where_true,)),
    Mutant("primer-groups-interchangeable-and-convergent-swapped",
           lambda mp: mp.setattr(primer, "_groups", _groups_swapped), (walk_says_the_recorded_numbers,)),
]
