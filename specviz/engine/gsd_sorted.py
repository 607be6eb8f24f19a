"""GSD "ours" (rules.gsd, docs/methods.md §4) in the sorted space, for laws that judge most of the vocabulary.

Every judged cell's window is a run of `min(G, V)` consecutive positions of its row's descending ranking starting at
lo(r) = clamp(r - G//2, 0, V - G), and lo depends on the rank r alone: member o of the cell at rank r sits at rank
lo(r) + o, which is r - G//2 + o (a shift) for every rank but the G - 1 at the two ends, where lo is 0 or V - G. So
the laws and vectors are put in rank order once per row, each member is a shifted slice (the ends: one column),
never a per-cell gather, and the answer is scattered back to token order. The same numbers as rules.gsd's per-cell
path (tests/engine/test_gsd_sorted.py)."""
from __future__ import annotations

import torch


def _at(t: torch.Tensor, o: int, group: int) -> torch.Tensor:
    """t (..., V) in rank order -> (..., V): at rank r, t at member o of r's window (rank lo(r) + o)."""
    V = t.shape[-1]
    if V <= group:                                                  # one window, ranks 0 .. V - 1, for every rank
        return t[..., o:o + 1].expand(t.shape)
    h, n = group // 2, V - group + 1                                # ranks h .. h + n - 1: lo = r - h
    return torch.cat([t[..., o:o + 1].expand(*t.shape[:-1], h), t[..., o:o + n],
                      t[..., V - group + o:V - group + o + 1].expand(*t.shape[:-1], V - h - n)], -1)


def _dot_at(es: torch.Tensor, o: int, group: int) -> torch.Tensor:
    """<e at member o of each rank's window, e at the rank> for es (d, L, V) in rank order -> (L, V); the same
    products as (_at(es, o, group) * es).sum(0), without copying es."""
    V = es.shape[-1]
    if V <= group:
        return (_at(es, o, group) * es).sum(0)
    h, n = group // 2, V - group + 1
    head = (es[..., o:o + 1] * es[..., :h]).sum(0)
    mid = (es[..., o:o + n] * es[..., h:h + n]).sum(0)
    tail = (es[..., V - group + o:V - group + o + 1] * es[..., h + n:]).sum(0)
    return torch.cat([head, mid, tail], -1)


def ours_sorted(q: torch.Tensor, p: torch.Tensor, vectors: torch.Tensor, group: int, gap: float,
                dist: float) -> torch.Tensor:
    """a (L, V) of GSD "ours" for laws q, p (L, V) and code vectors (V, d): 1 where p = 0."""
    L, V = q.shape
    order = q.argsort(dim=-1, descending=True, stable=True)                     # (L, V) ids by rank
    qs, ps = q.gather(1, order), p.gather(1, order)                              # (L, V) in rank order
    es = vectors.T.contiguous().index_select(1, order.view(-1)).view(-1, L, V)  # (d, L, V): e in rank order
    ns = (es * es).sum(0)                                                        # (L, V) |e|^2 in rank order
    rank = torch.arange(V, device=q.device)
    qz, pz, keep = [], [], []
    for o in range(min(group, V)):
        qz.append(_at(qs, o, group))
        pz.append(_at(ps, o, group))
        d2 = _at(ns, o, group) + ns - 2 * _dot_at(es, o, group)       # |e_z - e_y|^2
        keep.append(((qz[-1] - qs).abs() < gap) & (d2 < dist) & (_at(rank, o, group) != rank))
    kept = torch.stack(keep, -1)
    num = qs + (torch.stack(qz, -1) * kept).sum(-1)
    den = ps + (torch.stack(pz, -1) * kept).sum(-1)
    a = torch.where(ps > 0, (num / den).clamp(max=1.0), torch.ones_like(qs))
    return torch.empty_like(a).scatter_(1, order, a)


def member_d2(vectors, order, rows, r, pos, inside, chunk_floats: int, block: int = 64) -> torch.Tensor:
    """(n, W) squared distances between each judged cell's token (sorted position r) and its window members (sorted
    positions pos), in the Gram form of the released table, |e_y|^2 + |e_z|^2 - 2<e_y, e_z>. Narrow vectors are
    gathered per member; wide ones (input embeddings) by one small matrix product per block of `block` sorted
    positions with the contiguous slice of the sorted vocabulary within `band` of it (members sit there), which
    gathers each vector about once instead of W times (chunk_floats: rules.gsd's work bound per chunk; the per-cell
    path of rules.gsd, kept here beside the sorted path)."""
    norms = torch.einsum("vd,vd->v", vectors, vectors)
    n, width = pos.shape
    if vectors.shape[-1] <= 64 or n * width * vectors.shape[-1] <= chunk_floats >> 4:
        z, y = order[rows[:, None], pos], order[rows, r][:, None]
        return norms[z] + norms[y] - 2 * torch.einsum("nwd,nwd->nw", vectors[z], vectors[y].expand_as(vectors[z]))
    band = int(((pos - r[:, None]).abs() * inside).max()) + 1
    V = order.shape[1]
    out = torch.empty(pos.shape)
    for row in rows.unique().tolist():
        sel = (rows == row).nonzero().squeeze(-1)
        rs, ps = r[sel], pos[sel]
        for b in (rs // block).unique().tolist():
            lo, hi = b * block, min(V, (b + 1) * block)
            c0, c1 = max(0, lo - band), min(V, hi + band)
            ri, ci = order[row, lo:hi], order[row, c0:c1]
            d = norms[ri, None] + norms[None, ci] - 2 * vectors[ri] @ vectors[ci].T     # (rows, cols)
            m = (rs // block) == b
            out[sel[m]] = d[(rs[m] - lo)[:, None], (ps[m] - c0).clamp(0, c1 - c0 - 1)]
    return out


def rank_key(q: torch.Tensor) -> torch.Tensor:
    """(L, V) int64 keys whose descending order is the stable descending ranking of q >= 0: q's float32 bits, then
    -code (ties: the smaller code first)."""
    V = q.shape[-1]
    return (q.float().contiguous().view(torch.int32).long() << 32) | (V - 1 - torch.arange(V, device=q.device))


def window_lo(r: torch.Tensor, V: int, group: int) -> torch.Tensor:
    """The first rank of the window of the cell at rank r: G//2 above when possible, slid inside at the ends."""
    return (r - group // 2).clamp(0, V - group)


def window_at(q: torch.Tensor, p: torch.Tensor, x: torch.Tensor, vectors: torch.Tensor, group: int, gap: float,
              dist: float) -> torch.Tensor:
    """GSD "ours" at the drafted cells alone, rules.gsd(q, p, ...)[rows, x] to the same bits, (L,), with no sort of
    the rows: for 1 < group < V and narrow vectors (<= 64 dims; rules.gsd's per-cell path, the same numbers as the
    sorted path). The ranking's strict key is (q's float32 bits, -code) (q >= 0: the bits order as the values; the
    stable descending sort's ties by code), x's rank r is the count of keys above its own, and the members at ranks
    lo .. lo + G - 1 are the G - 1 nearest keys above and below x's (two top-k's)."""
    L, V = q.shape
    rows, o = torch.arange(L, device=q.device), torch.arange(group, device=q.device)
    key = rank_key(q)
    kx = key[rows, x][:, None]
    r = (key > kx).sum(-1)
    lo = window_lo(r, V, group)
    big = torch.iinfo(torch.int64).max
    above = torch.where(key > kx, key, big).topk(group - 1, -1, largest=False).indices     # rank r - 1, r - 2, ...
    below = torch.where(key < kx, key, -big).topk(group - 1, -1).indices                  # rank r + 1, r + 2, ...
    d = r[:, None] - (lo[:, None] + o)                            # member o: before x (d > 0), x, after x
    z = torch.where(d > 0, above.gather(1, (d - 1).clamp(0, group - 2)),
                    torch.where(d == 0, x[:, None], below.gather(1, (-d - 1).clamp(0, group - 2))))
    pos = o.expand(L, group)
    d2 = member_d2(vectors, z, rows, r - lo, pos, torch.ones_like(pos, dtype=torch.bool), 0)   # narrow: no chunks
    qz, qy = q[rows[:, None], z], q[rows, x][:, None]             # rules._gsd_ratio's "ours" arithmetic
    keep = ((qz - qy).abs() < gap) & (d2 < dist) & (z != x[:, None])
    num = qy[:, 0] + (qz * keep).sum(-1)
    den = p[rows, x] + (p[rows[:, None], z] * keep).sum(-1)
    return torch.where(p[rows, x] > 0, (num / den).clamp(max=1.0), torch.ones_like(num))
