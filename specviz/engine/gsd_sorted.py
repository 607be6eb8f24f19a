"""GSD "ours" (rules.gsd, docs/methods.md §4) in the sorted space, for laws that judge most of the vocabulary.

Every judged cell's window is a run of `min(G, V)` consecutive positions of its row's descending ranking starting at
lo(r) = clamp(r - G//2, 0, V - G), and lo depends on the rank r alone: member o of the cell at rank r sits at rank
lo(r) + o, which is r - G//2 + o (a shift) for every rank but the G - 1 at the two ends, where lo is 0 or V - G. So
the laws are put in rank order once per row, each member is a shifted slice (the ends: one column), and the answer
is scattered back to token order. Squared distances |e_z - e_y|^2 are computed for vectors of any width (Lumina-mGPT's
256-dim codebook too) in one arithmetic (`dots`, coordinate by coordinate), in chunks whose sizes come from the
shapes, with no device -> host read: the sorted rows, the cells at the drafts (window_at) and rules.gsd's per-cell
path give the same bits (tests/engine/test_gsd_sorted.py)."""
from __future__ import annotations

import weakref

import torch


def _at(t: torch.Tensor, o: int, group: int) -> torch.Tensor:
    """t (..., V) in rank order -> (..., V): at rank r, t at member o of r's window (rank lo(r) + o)."""
    V = t.shape[-1]
    if V <= group:                                                  # one window, ranks 0 .. V - 1, for every rank
        return t[..., o:o + 1].expand(t.shape)
    h, n = group // 2, V - group + 1                                # ranks h .. h + n - 1: lo = r - h
    return torch.cat([t[..., o:o + 1].expand(*t.shape[:-1], h), t[..., o:o + n],
                      t[..., V - group + o:V - group + o + 1].expand(*t.shape[:-1], V - h - n)], -1)


CHUNK_FLOATS = 1 << 24     # GSD distance work per chunk (cells x members x dims or rows x codes x dims): 64 MB


def dots(z_at, y_at, dims: int) -> torch.Tensor:
    """Σ_k z_at(k)·y_at(k) over k = 0 .. dims - 1, added one coordinate at a time in that order (z_at, y_at: k ->
    tensors of one coordinate, broadcastable). Elementwise products and sums only, so a pair's value has the same bits
    whatever shape, chunk or device computes it (a reduction kernel's order depends on all three): the one dot
    product of GSD's distances, in the full rows, at the drafts and per cell alike."""
    acc = z_at(0) * y_at(0)
    for k in range(1, dims):
        acc += z_at(k) * y_at(k)
    return acc


_TABLES: dict = {}     # id(vectors) -> (weak ref, version, vt (d, V), norms (V,)): a model's table, every step


def tables(vectors: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(vt (d, V): the code vectors transposed, |e|^2 (V,) by `dots`), computed once per vectors tensor (the same
    tensor comes every step; an in-place change of it, which bumps its version, recomputes them)."""
    hit = _TABLES.get(id(vectors))
    if hit is not None and hit[0]() is vectors and hit[1] == vectors._version:
        return hit[2], hit[3]
    vt = vectors.T.contiguous()
    norms = dots(vt.__getitem__, vt.__getitem__, vt.shape[0])
    for key in [k for k, v in list(_TABLES.items()) if v[0]() is None]:         # tables of freed tensors
        _TABLES.pop(key, None)
    _TABLES[id(vectors)] = (weakref.ref(vectors), vectors._version, vt, norms)
    return vt, norms


def _window_dots(es: torch.Tensor, group: int) -> torch.Tensor:
    """(rows, V, min(G, V)) <e_z, e_y> for es (d, rows, V) in rank order: at rank r, z = member o of r's window. The
    windows of the middle ranks are one strided view of each coordinate's row (unfold: a shift per member), the G - 1
    at the ends one fixed run of ranks (0 .. G - 1, V - G .. V - 1); no gather."""
    d, rows, V = es.shape
    if V <= group:                                                    # one window, ranks 0 .. V - 1, for every rank
        return dots(lambda k: es[k][:, None, :], lambda k: es[k][:, :, None], d)
    h, n = group // 2, V - group + 1                                  # ranks h .. h + n - 1: lo = r - h
    out = torch.empty(rows, V, group, device=es.device)
    out[:, :h] = dots(lambda k: es[k][:, None, :group], lambda k: es[k][:, :h, None], d)
    out[:, h:h + n] = dots(lambda k: es[k].unfold(-1, group, 1), lambda k: es[k][:, h:h + n, None], d)
    out[:, h + n:] = dots(lambda k: es[k][:, None, V - group:], lambda k: es[k][:, h + n:, None], d)
    return out


def _sorted_d2(vectors: torch.Tensor, order: torch.Tensor, group: int, chunk_floats: int) -> torch.Tensor:
    """(L, V, min(G, V)) |e_z - e_y|^2 = |e_z|^2 + |e_y|^2 - 2<e_z, e_y> in rank order: at rank r, member o of r's
    window (rank lo(r) + o). Rows a chunk at a time (the rank-ordered vectors of a chunk: at most chunk_floats),
    the chunk size from the shapes alone."""
    vt, norms = tables(vectors)
    L, V = order.shape
    d, width = vt.shape[0], min(group, V)
    lo = (torch.arange(V, device=order.device) - group // 2).clamp(0, max(0, V - group))
    idx = lo[:, None] + torch.arange(width, device=order.device)                 # (V, W) member ranks
    ns = norms[order]                                                            # (L, V) |e|^2 in rank order
    out = torch.empty(L, V, width, device=order.device)
    step = max(1, chunk_floats // (V * max(d, width)))
    for i in range(0, L, step):
        es = vt.index_select(1, order[i:i + step].reshape(-1)).view(d, -1, V)   # (d, rows, V) e in rank order
        out[i:i + step] = ns[i:i + step][:, idx] + ns[i:i + step, :, None] - 2 * _window_dots(es, group)
    return out


def ours_sorted(q: torch.Tensor, p: torch.Tensor, vectors: torch.Tensor, group: int, gap: float,
                dist: float, chunk_floats: int = CHUNK_FLOATS) -> torch.Tensor:
    """a (L, V) of GSD "ours" for laws q, p (L, V) and code vectors (V, d) of any width: 1 where p = 0."""
    L, V = q.shape
    order = q.argsort(dim=-1, descending=True, stable=True)                     # (L, V) ids by rank
    qs, ps = q.gather(1, order), p.gather(1, order)                              # (L, V) in rank order
    d2 = _sorted_d2(vectors, order, group, chunk_floats)                         # (L, V, W) |e_z - e_y|^2
    rank = torch.arange(V, device=q.device)
    qz, pz, keep = [], [], []
    for o in range(min(group, V)):
        qz.append(_at(qs, o, group))
        pz.append(_at(ps, o, group))
        keep.append(((qz[-1] - qs).abs() < gap) & (d2[..., o] < dist) & (_at(rank, o, group) != rank))
    kept = torch.stack(keep, -1)
    num = qs + (torch.stack(qz, -1) * kept).sum(-1)
    den = ps + (torch.stack(pz, -1) * kept).sum(-1)
    a = torch.where(ps > 0, (num / den).clamp(max=1.0), torch.ones_like(qs))
    return torch.empty_like(a).scatter_(1, order, a)


def member_d2(vectors: torch.Tensor, order: torch.Tensor, rows: torch.Tensor, r: torch.Tensor, pos: torch.Tensor,
              chunk_floats: int = CHUNK_FLOATS) -> torch.Tensor:
    """(n, W) squared distances between each judged cell's token (sorted position r in its row of `order`) and its
    window members (sorted positions pos (n, W)), |e_z|^2 + |e_y|^2 - 2<e_z, e_y> with `dots` (the sorted rows'
    numbers to the bit). Cells a chunk at a time (members x dims <= chunk_floats); no host reads."""
    vt, norms = tables(vectors)
    d = vt.shape[0]
    z, y = order[rows[:, None], pos], order[rows, r]                              # (n, W), (n,) code ids
    n, width = pos.shape
    out = torch.empty(n, width, device=vectors.device)
    step = max(1, chunk_floats // (width * d))
    for i in range(0, n, step):
        zc, yc = z[i:i + step], y[i:i + step]
        zt, yt = vt[:, zc], vt[:, yc][..., None]                                 # (d, c, W), (d, c, 1)
        out[i:i + step] = norms[zc] + norms[yc][:, None] - 2 * dots(zt.__getitem__, yt.__getitem__, d)
    return out


def released_d2(vectors, order, rows, r, pos, inside, chunk_floats: int, block: int = 64) -> torch.Tensor:
    """rules.gsd's distances for the released reading (its windows need not be the "ours" windows; it has no rule at
    the drafts): `member_d2` for narrow vectors or few cells; wide ones (input embeddings, up to 4096 dims) with many
    cells by one small matrix product per block of `block` sorted positions with the slice of the sorted vocabulary
    within `band` of it, which gathers each vector about once instead of W times. That banded form, kept as it was
    for its speed at thousands of dims (matrix products), reads the band and the rows on the host."""
    n, width = pos.shape
    if vectors.shape[-1] <= 64 or n * width * vectors.shape[-1] <= chunk_floats >> 4:
        return member_d2(vectors, order, rows, r, pos, chunk_floats)
    norms = torch.einsum("vd,vd->v", vectors, vectors)
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
    the rows: for 1 < group < V and vectors of any width (distances by `dots`, as the full rows). The ranking's
    strict key is (q's float32 bits, -code) (q >= 0: the bits order as the values; the stable descending sort's ties
    by code), x's rank r is the count of keys above its own, and the members at ranks lo .. lo + G - 1 are the G - 1
    nearest keys above and below x's (two top-k's)."""
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
    d2 = member_d2(vectors, z, rows, r - lo, o.expand(L, group))
    qz, qy = q[rows[:, None], z], q[rows, x][:, None]             # rules._gsd_ratio's "ours" arithmetic
    keep = ((qz - qy).abs() < gap) & (d2 < dist) & (z != x[:, None])
    num = qy[:, 0] + (qz * keep).sum(-1)
    den = p[rows, x] + (p[rows[:, None], z] * keep).sum(-1)
    return torch.where(p[rows, x] > 0, (num / den).clamp(max=1.0), torch.ones_like(num))
