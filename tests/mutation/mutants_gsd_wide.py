"""Mutation-check variants for GSD at wide code vectors (engine/gsd_sorted.py: one d2 arithmetic, row and cell
chunks sized by the shapes, no host reads; protocol: tests/support/mutants.py)."""
from __future__ import annotations

import weakref

import torch

from specviz.engine import gsd_sorted, rules
from tests.engine.test_gsd_sorted import tables_follow_the_vectors, wide_distances_agree, wide_rules_agree
from tests.engine.test_host_syncs import gsd_wide_reads_within_two
from tests.support.mutants import Mutant


def _dots_by_reduction(zs, ys):
    """Wrong: the coordinates' products summed by a reduction kernel (its order depends on the shape summed)."""
    return torch.stack([z * y for z, y in zip(zs, ys)]).sum(0)


def _sorted_d2_wrong(whole_chunks: bool = False, cell_rank: bool = False, short_table: bool = False):
    """Wrong variants of gsd_sorted._sorted_d2: the row chunks stop at the last whole chunk (range(0, L - L % step,
    step): a shorter last chunk, or fewer rows than one chunk, never computed); the pair table read at the cell's
    own rank for every member (not the smaller of the two ranks: members above the cell pair with the wrong code);
    the pair table one shift short (shifts < W - 1: the farthest member read from the next rank's entries)."""
    def sorted_d2(vectors, order, group, chunk_floats):
        vt, norms = gsd_sorted.tables(vectors)
        L, V = order.shape
        d, width = vt.shape[0], min(group, V)
        cols = width - 1 if short_table else width
        r = torch.arange(V)
        m = (r - group // 2).clamp(0, max(0, V - group))[:, None] + torch.arange(width)
        a = r[:, None].expand_as(m) if cell_rank else torch.minimum(r[:, None], m)
        pair = (a * cols + (m - r[:, None]).abs()).clamp(max=V * cols - 1)
        ns = norms[order]
        out = torch.zeros(L, V, width)
        step = max(1, chunk_floats // (V * max(d, width)))
        for i in range(0, L - L % step if whole_chunks else L, step):
            es = vt.index_select(1, order[i:i + step].reshape(-1)).view(d, -1, V)
            dot = gsd_sorted._pair_dots(es, cols).view(es.shape[1], -1)[:, pair]
            out[i:i + step] = ns[i:i + step][:, m] + ns[i:i + step, :, None] - 2 * dot
        return out
    return sorted_d2


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
        out[i:i + step - 1] = norms[zc] + norms[yc][:, None] - 2 * gsd_sorted.dots(zt.unbind(0), yt.unbind(0))
    return out


def _tables_without_version(vectors):
    """Wrong: the tables cached by the tensor alone, not its version (an in-place change keeps stale norms)."""
    hit = gsd_sorted._TABLES.get(id(vectors))
    if hit is not None and hit[0]() is vectors:
        return hit[2], hit[3]
    vt = vectors.T.contiguous()
    norms = gsd_sorted.dots(vt.unbind(0), vt.unbind(0))
    version = -1 if vectors.is_inference() else vectors._version
    gsd_sorted._TABLES[id(vectors)] = (weakref.ref(vectors), version, vt, norms)
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
    Mutant("GSD's sorted pair table read at the cell's own rank for members above it",
           lambda mp: mp.setattr(gsd_sorted, "_sorted_d2", _sorted_d2_wrong(cell_rank=True)), (wide_distances_agree,)),
    Mutant("GSD's sorted pair table one shift short",
           lambda mp: mp.setattr(gsd_sorted, "_sorted_d2", _sorted_d2_wrong(short_table=True)),
           (wide_distances_agree,)),
    Mutant("GSD's sorted distances computed for whole row chunks only",
           lambda mp: mp.setattr(gsd_sorted, "_sorted_d2", _sorted_d2_wrong(whole_chunks=True)),
           (wide_distances_agree,)),
    Mutant("GSD's per-cell distance chunks end one cell early", _plant_short_chunks, (wide_rules_agree,)),
    Mutant("GSD's vector tables kept after an in-place change of the vectors",
           lambda mp: mp.setattr(gsd_sorted, "tables", _tables_without_version), (tables_follow_the_vectors,)),
    Mutant("GSD at the drafts reads its windows' width on the host", _plant_reading, (gsd_wide_reads_within_two,)),
]
