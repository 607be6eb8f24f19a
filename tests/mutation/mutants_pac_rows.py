"""Mutation-check variants for SJD-PAC's batched candidate draws (drafters/pac.levels_rows, pac._wide,
pac.level_laws) (protocol: tests/support/mutants.py): a job's stream offset, a drawn cell left in its law, an
out-of-mass draw kept, or a sibling law normalised by the wrong mass must change the draws or the laws."""
from __future__ import annotations

import torch

from specviz.engine.drafters import pac
from tests.engine.test_pac_ahead import pac_ahead_equals_own_reads
from tests.engine.test_pac_levels import (
    test_level_laws_equal_each_level_drawn_alone,
    test_levels_rows_equal_each_job_drawn_alone,
)
from tests.support.mutants import Mutant


def _every_job_from_the_stream_start(real):
    """Wrong: every end's draws start at the stream's first uniform (its walk's uniforms not skipped)."""
    def levels_rows(jobs, uniform, us):
        return real([(cs, ws, 0) for cs, ws, _ in jobs], uniform, us)
    return levels_rows


def _wide_with_replacement(rest, first, u, widths):
    """Wrong: a wide row's further candidates drawn without zeroing the ones already drawn (with replacement)."""
    rows = torch.arange(len(rest))
    rest[rows, first] = 0.0
    toks, masses = [], []
    for k in range(u.shape[1]):
        masses.append(rest.sum(-1))
        toks.append(pac.draw(rest / torch.where(masses[-1] > 1e-9, masses[-1], 1.0)[:, None], u[:, k]))
    alive = torch.stack(masses, 1) > 1e-9
    if min(widths) < u.shape[1] + 1:
        alive &= torch.tensor([[k + 1 < w for k in range(u.shape[1])] for w in widths])
    return torch.where(alive, torch.stack(toks, 1), -1)


def _wide_keeping_out_of_mass_draws(real):
    """Wrong: a draw from a law out of mass kept as a candidate (no -1), counted as a used uniform."""
    def wide(rest, first, u, widths):
        law = rest.clone()
        out = real(rest, first, u, widths)
        law[torch.arange(len(law)), first] = 0.0
        return torch.where(out < 0, law.argmax(-1)[:, None], out)
    return wide


def _laws_over_the_base_mass(levels):
    """Wrong: every sibling's law divided by its level's whole base mass (the earlier candidates' mass kept)."""
    out = []
    for toks, base in levels:
        b, laws = base.clone(), []
        for t in toks:
            laws.append(b / base.sum())
            b = b.clone()
            b[t] = 0.0
        out.append(laws)
    return out


VARIANTS = [
    Mutant("every end's next candidates drawn from the stream's start, not after its walk's uniforms",
           lambda mp: mp.setattr(pac, "levels_rows", _every_job_from_the_stream_start(pac.levels_rows)),
           (test_levels_rows_equal_each_job_drawn_alone, pac_ahead_equals_own_reads)),
    Mutant("a wide level's further candidates drawn with replacement",
           lambda mp: mp.setattr(pac, "_wide", _wide_with_replacement),
           (test_levels_rows_equal_each_job_drawn_alone,)),
    Mutant("a draw from a law out of mass kept as a candidate",
           lambda mp: mp.setattr(pac, "_wide", _wide_keeping_out_of_mass_draws(pac._wide)),
           (test_levels_rows_equal_each_job_drawn_alone,)),
    Mutant("the sibling laws normalised by the level's whole base mass",
           lambda mp: mp.setattr(pac, "level_laws", _laws_over_the_base_mass),
           (test_level_laws_equal_each_level_drawn_alone,)),
]
