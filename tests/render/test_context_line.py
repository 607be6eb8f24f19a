"""The inspector's context sentence (render/verdict.context_line over analysis/context.seen) against the
hand-computed ZipAR schedule of tests/analysis/test_missing_context.py (4 x 6 grid, w = 2: row 0 at forwards
0..5, row 1 column c at 6 + c, row 2 at 8 + c, row 3 at 10 + c), and where the inspector says it."""
from __future__ import annotations

import pytest

from specviz.analysis import context
from specviz.analysis.cards import cards
from specviz.render import html, verdict
from tests.engine.test_zipar import Regrid, _run

# (2, 2) at forward 10 saw row 1 up to column 3 (forwards 6..9) and its own row's columns 0..1 (8, 9): row 1's
# columns 4, 5 missing. (3, 0) at 10 saw row 1 up to column 3, row 2 up to column 1: row 1's 4, 5 and row 2's 2..5
# missing. (3, 2) at 12 saw rows 0-1 whole, row 2 up to column 3, its own row's 0..1: row 2's 4, 5 missing.
HAND = {0: "Context seen: nothing before it: no positions missing.",
        5: "Context seen: row 0 up to column 4: no positions missing.",
        14: "Context seen: row 0 complete, row 1 up to column 3, row 2 up to column 1: 2 positions missing.",
        18: "Context seen: row 0 complete, row 1 up to column 3, row 2 up to column 1: 6 positions missing.",
        20: "Context seen: rows 0–1 complete, row 2 up to column 3, row 3 up to column 1: 2 positions missing.",
        23: "Context seen: rows 0–2 complete, row 3 up to column 4: no positions missing."}


@pytest.fixture(scope="module")
def zipar_trace():
    return _run(Regrid(4, 6), method="zipar", zipar_w=2)


def test_the_sentence_against_the_hand_computed_schedule(zipar_trace=None):
    trace = zipar_trace or _run(Regrid(4, 6), method="zipar", zipar_w=2)
    got = {pos: verdict.context_line(context.seen(trace, pos)) for pos in HAND}
    assert got == HAND


def test_rows_not_seen_from_column_0_are_counted():
    """A row seen in part but not from its first column, and a row seen not at all, are said as counts."""
    s = context.Seen(row=2, col=3, width=6, rows=((0, 1, 2, 3, 4, 5), (1, 2), ()), missing=7)
    assert verdict.context_line(s) == "Context seen: row 0 complete, row 1: 2 of 6 columns, row 2: 0 of 3 columns: " \
                                      "7 positions missing."
    one = context.Seen(row=1, col=0, width=6, rows=((0, 1, 2, 3, 4), ()), missing=1)
    assert verdict.context_line(one) == "Context seen: row 0 up to column 4: 1 position missing."


def test_the_inspector_says_it_for_a_wavefront_run_only(zipar_trace):
    said = html.inspector(zipar_trace, 18, cards())
    assert HAND[18] in said
    ar = _run(Regrid(4, 6), method="ar")
    assert "Context seen" not in html.inspector(ar, 18, cards())
