"""Mutation-check variants for the inspector's context sentence (analysis/context.seen, render/verdict.context_line)
the race's painting of a wavefront lane (app/race.painted) and the paper table's rows for a method that drafts nothing
(analysis/paper.rows) (protocol: tests/support/mutants.py)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from specviz.analysis import context, paper
from specviz.app import race
from specviz.render import verdict
from tests.analysis import test_bench_paper as tbp
from tests.analysis import test_missing_context as tmc
from tests.app import test_race as trc
from tests.render import test_context_line as tcl
from tests.support.mutants import Mutant

_seen = context.seen


def _own_row_dropped(trace, pos):
    """Wrong: the token's own row left out of what it saw (only the rows above are listed and counted)."""
    s = _seen(trace, pos)
    return s and context.Seen(row=s.row, col=s.col, width=s.width, rows=s.rows[:-1] + ((),),
                              missing=s.missing + len(s.rows[-1]))


def _chain_missing(trace, pos):
    """Wrong: the token's own chain (earlier drafts of its row committed in the same step) counted as missing."""
    s = _seen(trace, pos)
    if s is None:
        return s
    step = {p: st for p, (st, _) in context.commit_steps(trace).items()}
    rows = tuple(tuple(c for c in cols if step[i * s.width + c] < step[pos]) for i, cols in enumerate(s.rows))
    return context.Seen(row=s.row, col=s.col, width=s.width, rows=rows, missing=pos - sum(map(len, rows)))


def _prefix_only(tokens, board, n_pos):
    """Wrong (the lane before): only the committed raster prefix is drawn, the rows below wait for it."""
    tokens = list(tokens[:n_pos])
    decided = np.zeros(n_pos, bool)
    decided[:len(tokens)] = True
    return tokens + [tokens[-1]] * (n_pos - len(tokens)), decided


def zipar_paints():
    from tests.support.toy import toy  # noqa: PLC0415 - the race tests' 4x4 model, built when checked
    trc.test_a_wavefront_lane_paints_every_committed_row(toy(codes=8, grid=4), "zipar", dict(zipar_w=2))


# Wrong: the paper table finds no record for any spec and reads every method as drafting (ZipAR's rows counted as
# accepted drafts), as a lookup by the whole spec ("zipar:zipar_w=2") instead of its method name would
_NO_RECORDS = SimpleNamespace(REGISTRY={})


def pjd_agrees():
    tmc.test_what_each_token_saw_agrees_with_the_map(dict(method="pjd", pjd_c=2, window=4, seed=2))


VARIANTS = [
    Mutant("context-line-own-row-dropped", lambda mp: mp.setattr(context, "seen", _own_row_dropped),
           (tcl.test_the_sentence_against_the_hand_computed_schedule,)),
    Mutant("context-line-chain-missing", lambda mp: mp.setattr(context, "seen", _chain_missing), (pjd_agrees,)),
    Mutant("context-line-rows-range-one-past", lambda mp: mp.setattr(
        verdict, "_rows", lambda run: f"rows {run[0]}–{run[-1] + 1} complete" if len(run) > 1 else
        f"row {run[0]} complete"), (tcl.test_the_sentence_against_the_hand_computed_schedule,)),
    Mutant("race-paints-the-raster-prefix-only", lambda mp: mp.setattr(race, "painted", _prefix_only),
           (zipar_paints,)),
    Mutant("paper-acceptance-for-zipar", lambda mp: mp.setattr(paper, "registry", _NO_RECORDS),
           (tbp.test_zipar_and_pjd_rows_beside_the_others,)),
]
