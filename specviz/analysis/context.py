"""The context each token lacked (docs/methods.md §10): methods that decode several rows at once (zipar, pjd) commit
a token while raster-earlier positions are still undecided; raster methods never do.

Read from the trace alone. A token committed in step s saw every position committed in an earlier step and, of the
tokens committed in step s, those of its own chain: an event at `level` l (a chain's slot, a tree's depth; the
resampled or bonus token at its slot) follows the l - 1 positions right before it in that step's chain or path; an
`ar` event (level 0: AR, ZipAR) sees none of its step's other tokens. So

    missing(p) = #{j < p : committed in step s or later} - (l - 1)^+,

which is 0 for every raster method (its step commits a contiguous run ending at p, or p alone) and, for a wavefront
method, counts the raster-earlier positions its forward did not see: the rest of the rows above, and the tokens
committed in the same step outside its own row's chain.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from specviz.core.trace import Trace


def commit_steps(trace: Trace) -> dict[int, tuple[int, int]]:
    """pos -> (the step that committed it, the committing event's level)."""
    return {pos: (step, ev.level) for pos, (step, ev) in trace.committing().items()}


def missing_context(trace: Trace) -> np.ndarray:
    """(H, W) float: per committed token, how many raster-earlier positions were not decided (nor in its own
    chain) when it was committed; NaN where undecided."""
    h, w = trace.grid
    n = h * w
    done = commit_steps(trace)
    step = np.array([done[p][0] if p in done else np.iinfo(np.int64).max for p in range(n)], dtype=np.int64)
    out = np.full(n, np.nan)
    for p, (s, level) in done.items():
        later = int(np.count_nonzero(step[:p] >= s))
        out[p] = later - max(level - 1, 0)
    return out.reshape(h, w)


def active_rows(trace: Trace) -> list[int]:
    """Per step, how many grid rows its events touched (the prefill: 1): for zipar and pjd the rows active in that
    forward (each active row judges or commits at least one token); for a raster method, the rows its run crossed."""
    w = trace.grid[1]
    return [len({ev.pos // w for ev in st.events}) for st in trace.steps]


@dataclass(frozen=True)
class Seen:
    """What one committed token's forward saw of its raster past (the inspector's sentence, render/verdict.py):
    per row 0..row, the columns before the token it saw, and how many raster-earlier positions it did not."""
    row: int
    col: int
    width: int
    rows: tuple[tuple[int, ...], ...]     # rows[i]: the columns of row i it saw (row `row`: those before `col`)
    missing: int


def seen(trace: Trace, pos: int) -> Seen | None:
    """The raster-earlier positions the forward that committed `pos` saw: those committed in an earlier step and
    the l - 1 right before it in its own chain (module docstring); None where `pos` is undecided."""
    done = commit_steps(trace)
    if pos not in done:
        return None
    s, level = done[pos]
    w = trace.grid[1]
    chain = set(range(pos - max(level - 1, 0), pos))
    saw = [j for j in range(pos) if j in chain or (j in done and done[j][0] < s)]
    r, c = divmod(pos, w)
    rows = tuple(tuple(j % w for j in saw if j // w == i) for i in range(r + 1))
    return Seen(row=r, col=c, width=w, rows=rows, missing=pos - len(saw))


def out_of_raster(trace: Trace) -> bool:
    """Whether some token of `trace` was committed without part of its raster past (zipar, pjd with overlapping
    rows): the inspector then says what each token saw."""
    return bool(np.nanmax(missing_context(trace), initial=0) > 0)
