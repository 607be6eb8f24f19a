"""Mutation-check variants for the wavefront methods (engine/zipar.py, engine/pjd.py) and the missing-context map
(analysis/context.py) (protocol: tests/support/mutants.py)."""
from __future__ import annotations

import numpy as np
import torch

from specviz.analysis import context
from specviz.engine import pjd, zipar
from tests.analysis import test_missing_context as tmc
from tests.engine import test_pjd as tp
from tests.engine import test_zipar as tz
from tests.support.mutants import Mutant
from tests.support.toy import toy


def _missing_counts_own_chain(trace):
    """Wrong: the token's own row's chain (its earlier drafts committed in the same step) counted as missing."""
    h, w = trace.grid
    done = context.commit_steps(trace)
    out = np.full(h * w, np.nan)
    for p, (s, _) in done.items():
        out[p] = sum(1 for j in range(p) if done[j][0] >= s)
    return out.reshape(h, w)


def _missing_same_step_seen(trace):
    """Wrong: every token committed in the same step counted as seen (only later steps missing)."""
    h, w = trace.grid
    done = context.commit_steps(trace)
    out = np.full(h * w, np.nan)
    for p, (s, _) in done.items():
        out[p] = sum(1 for j in range(p) if done[j][0] > s)
    return out.reshape(h, w)


def _missing_rows_above_only(trace):
    """Wrong: the token's own row never counted, the rows above counted without its chain."""
    h, w = trace.grid
    done = context.commit_steps(trace)
    out = np.full(h * w, np.nan)
    for p, (s, _) in done.items():
        out[p] = sum(1 for j in range(p - p % w) if done[j][0] >= s)
    return out.reshape(h, w)


def raster_zero_sjd():
    tmc.test_zero_for_every_raster_method(toy(codes=6, grid=4), dict(method="sjd", window=6), "papers")


def pjd_brute():
    tmc.test_pjd_against_a_brute_force_count(2, 4, 2)


def zipar_schedule():
    tz.test_forward_count_is_the_closed_form_on_scenes(4, 6, 2)
    tz.test_rows_start_as_the_schedule_says()


def overlap():
    for c, window, seed in ((1, 6, 2), (2, 4, 2), (3, 5, 0)):
        tp.test_rows_overlap_and_never_overtake(c, window, seed)


def _rows_start_one_late(self):
    """Wrong: row r + 1 (r >= 1) starts once row r has w + 1 tokens (an off-by-one in the window)."""
    b, out = self.board, []
    for r in range(b.h):
        need = b.w if r == 1 else min(self.span + 1, b.w)
        if b.count[r] < b.w and (r == 0 or b.count[r - 1] >= need):
            out.append(r)
    return out


def _stand_in_kept(mp):
    """Wrong: a new row's stand-in input is kept in the cache like a decided token."""
    real_feeds = zipar.Board.feeds

    def feeds(self, wants, stand_in):
        tokens, positions, real = real_feeds(self, wants, stand_in)
        return tokens, positions, [True] * len(real)
    mp.setattr(zipar.Board, "feeds", feeds)


VARIANTS = [
    Mutant("missing-counts-own-chain", lambda mp: mp.setattr(context, "missing_context", _missing_counts_own_chain),
           (raster_zero_sjd, pjd_brute)),
    Mutant("missing-same-step-seen", lambda mp: mp.setattr(context, "missing_context", _missing_same_step_seen),
           (tmc.test_zipar_against_the_hand_computed_schedule, pjd_brute)),
    Mutant("missing-rows-above-only", lambda mp: mp.setattr(context, "missing_context", _missing_rows_above_only),
           (raster_zero_sjd,)),
    Mutant("zipar-rows-start-one-late", lambda mp: mp.setattr(zipar.ZipAR, "active", _rows_start_one_late),
           (zipar_schedule,)),
    Mutant("zipar-stand-in-kept", _stand_in_kept,
           (tz.test_each_decided_token_is_fed_once_the_forward_after_and_stand_ins_are_never_kept,)),
    Mutant("pjd-lower-rows-resample", lambda mp: mp.setattr(pjd.PJD, "postpones", staticmethod(lambda s, top: False)),
           (tp.test_only_the_top_active_row_samples_tokens,)),
    Mutant("pjd-overtakes", lambda mp: mp.setattr(pjd.PJD, "end", lambda self, r: (r + 1) * self.board.w),
           (overlap,)),
    Mutant("pjd-mask-sees-other-rows", lambda mp: mp.setattr(pjd, "row_causal",
                                                             lambda seg_of, fresh: _causal(len(seg_of))),
           (tp.test_row_causal_mask,)),
]


def _causal(n):
    """Wrong: a plain causal mask over all scratch rows (other rows' drafts visible)."""
    return torch.ones(n, n, dtype=torch.bool).tril()
