"""Mutation-check variants for GSD at wide code vectors (engine/gsd_sorted.py: one d2 arithmetic, row and cell
chunks sized by the shapes, no host reads; protocol: tests/support/mutants.py)."""
from __future__ import annotations

import weakref

import torch

from specviz.engine import gsd_sorted, rules
from tests.engine.test_gsd_sorted import tables_follow_the_vectors, wide_distances_agree, wide_rules_agree
from tests.engine.test_host_syncs import gsd_wide_reads_within_two
from tests.support.mutants import Mutant


def _dots_by_reduction(z_at, y_at, dims):
    """Wrong: the coordinates' products summed by a reduction kernel (its order depends on the shape summed)."""
    return torch.stack([z_at(k) * y_at(k) for k in range(dims)]).sum(0)


def _window_dots_shifted(at_tail: bool):
    """Wrong: the windows at the bottom of the ranking start one rank early (V - G - 1), or the middle ranks are
    paired with the next rank's vector (an off-by-one in the window's centre)."""
    def window_dots(es, group):
        d, rows, V = es.shape
        if V <= group:
            return gsd_sorted.dots(lambda k: es[k][:, None, :], lambda k: es[k][:, :, None], d)
        h, n = group // 2, V - group + 1
        c, t = (h, V - group - 1) if at_tail else (h + 1, V - group)
        out = torch.empty(rows, V, group)
        out[:, :h] = gsd_sorted.dots(lambda k: es[k][:, None, :group], lambda k: es[k][:, :h, None], d)
        out[:, h:h + n] = gsd_sorted.dots(lambda k: es[k].unfold(-1, group, 1), lambda k: es[k][:, c:c + n, None], d)
        out[:, h + n:] = gsd_sorted.dots(lambda k: es[k][:, None, t:t + group], lambda k: es[k][:, h + n:, None], d)
        return out
    return window_dots


def _sorted_d2_whole_chunks(vectors, order, group, chunk_floats):
    """Wrong: the row chunks stop at the last whole chunk (range(0, L - L % step, step)): a shorter last chunk, or
    rows fewer than one chunk, are never computed."""
    vt, norms = gsd_sorted.tables(vectors)
    L, V = order.shape
    d, width = vt.shape[0], min(group, V)
    lo = (torch.arange(V) - group // 2).clamp(0, max(0, V - group))
    idx = lo[:, None] + torch.arange(width)
    ns = norms[order]
    out = torch.zeros(L, V, width)
    step = max(1, chunk_floats // (V * max(d, width)))
    for i in range(0, L - L % step, step):
        es = vt.index_select(1, order[i:i + step].reshape(-1)).view(d, -1, V)
        out[i:i + step] = ns[i:i + step][:, idx] + ns[i:i + step, :, None] - 2 * gsd_sorted._window_dots(es, group)
    return out


def _member_d2_chunk_short(vectors, order, rows, r, pos, chunk_floats=gsd_sorted.CHUNK_FLOATS):
    """Wrong: each cell chunk ends one cell early (an exclusive bound taken twice: [i, i + step - 1))."""
    vt, norms = gsd_sorted.tables(vectors)
    d = vt.shape[0]
    z, y = order[rows[:, None], pos], order[rows, r]
    n, width = pos.shape
    out = torch.zeros(n, width)
    step = max(1, chunk_floats // (width * d))
    for i in range(0, n, step):
        zc, yc = z[i:i + step - 1], y[i:i + step - 1]
        zt, yt = vt[:, zc], vt[:, yc][..., None]
        out[i:i + step - 1] = norms[zc] + norms[yc][:, None] - 2 * gsd_sorted.dots(zt.__getitem__, yt.__getitem__, d)
    return out


def _tables_without_version(vectors):
    """Wrong: the tables cached by the tensor alone, not its version (an in-place change keeps stale norms)."""
    hit = gsd_sorted._TABLES.get(id(vectors))
    if hit is not None and hit[0]() is vectors:
        return hit[2], hit[3]
    vt = vectors.T.contiguous()
    norms = gsd_sorted.dots(vt.__getitem__, vt.__getitem__, vt.shape[0])
    gsd_sorted._TABLES[id(vectors)] = (weakref.ref(vectors), vectors._version, vt, norms)
    return vt, norms


def _member_d2_reading_the_width(real):
    """Wrong: the windows' width read from the tensors (one int() of the widest window a call), as the banded
    per-cell path did: a device -> host read in every call at the drafts."""
    def member_d2(vectors, order, rows, r, pos, chunk_floats=gsd_sorted.CHUNK_FLOATS):
        int((pos - pos[:, :1]).max())
        return real(vectors, order, rows, r, pos, chunk_floats)
    return member_d2


def _plant_reading(mp):
    wrong = _member_d2_reading_the_width(gsd_sorted.member_d2)
    mp.setattr(gsd_sorted, "member_d2", wrong)
    mp.setattr(rules, "member_d2", wrong)


def _plant_short_chunks(mp):
    mp.setattr(gsd_sorted, "member_d2", _member_d2_chunk_short)
    mp.setattr(rules, "member_d2", _member_d2_chunk_short)


VARIANTS = [
    Mutant("GSD's wide distances summed by a reduction kernel (order by shape), not coordinate by coordinate",
           lambda mp: mp.setattr(gsd_sorted, "dots", _dots_by_reduction), (wide_distances_agree,)),
    Mutant("GSD's sorted windows at the bottom of the ranking start one rank early",
           lambda mp: mp.setattr(gsd_sorted, "_window_dots", _window_dots_shifted(True)), (wide_distances_agree,)),
    Mutant("GSD's sorted middle windows paired with the next rank's vector",
           lambda mp: mp.setattr(gsd_sorted, "_window_dots", _window_dots_shifted(False)), (wide_distances_agree,)),
    Mutant("GSD's sorted distances computed for whole row chunks only",
           lambda mp: mp.setattr(gsd_sorted, "_sorted_d2", _sorted_d2_whole_chunks), (wide_distances_agree,)),
    Mutant("GSD's per-cell distance chunks end one cell early", _plant_short_chunks, (wide_rules_agree,)),
    Mutant("GSD's vector tables kept after an in-place change of the vectors",
           lambda mp: mp.setattr(gsd_sorted, "tables", _tables_without_version), (tables_follow_the_vectors,)),
    Mutant("GSD at the drafts reads its windows' width on the host", _plant_reading, (gsd_wide_reads_within_two,)),
]
