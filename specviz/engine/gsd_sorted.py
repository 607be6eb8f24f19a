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


def dots(zs, ys) -> torch.Tensor:
    """Σ_k zs[k]·ys[k], added one coordinate at a time in the order k = 0, 1, ... (zs, ys: sequences of one
    coordinate's tensors, broadcastable, e.g. `unbind(0)` of (d, ...) tensors). Elementwise products and sums only,
    so a pair's value has the same bits whatever shape or chunk computes it (a reduction kernel's order depends on
    the shape and the device): the one dot product of GSD's distances, in the full rows, at the drafts and per cell."""
    acc = zs[0] * ys[0]
    for z, y in zip(zs[1:], ys[1:]):
        acc += z * y
    return acc


_TABLES: dict = {}     # id(vectors) -> (weak ref, version, vt (d, V), norms (V,)): a model's table, every step


def tables(vectors: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(vt (d, V): the code vectors transposed, |e|^2 (V,) by `dots`), computed once per vectors tensor (the same
    tensor comes every step; an in-place change of it, which bumps its version, recomputes them; an inference tensor,
    a model's table made under inference_mode, keeps no version and is taken as unchanged)."""
    version = -1 if vectors.is_inference() else vectors._version
    hit = _TABLES.get(id(vectors))
    if hit is not None and hit[0]() is vectors and hit[1] == version:
        return hit[2], hit[3]
    vt = vectors.T.contiguous()
    norms = dots(vt.unbind(0), vt.unbind(0))
    for key in [k for k, v in list(_TABLES.items()) if v[0]() is None]:         # tables of freed tensors
        _TABLES.pop(key, None)
    _TABLES[id(vectors)] = (weakref.ref(vectors), version, vt, norms)
    return vt, norms


def _pair_dots(es: torch.Tensor, width: int) -> torch.Tensor:
    """(rows, V, width) <e_a, e_(a+s)> at rank a and shift s < width, for es (d, rows, V) in rank order (0 past the
    last rank): every pair of ranks a window holds, each once (a pair's dot is symmetric); one strided view of each
    coordinate's row (unfold), no gather."""
    d, rows, V = es.shape
    pad = torch.cat([es, es.new_zeros(d, rows, width - 1)], -1)       # (d, rows, V + width - 1)
    return dots(pad.unfold(-1, width, 1).unbind(0), es[..., None].unbind(0))


def _sorted_d2(vectors: torch.Tensor, order: torch.Tensor, group: int, chunk_floats: int) -> torch.Tensor:
    """(L, V, min(G, V)) |e_z - e_y|^2 = |e_z|^2 + |e_y|^2 - 2<e_z, e_y> in rank order: at rank r, member o of r's
    window (rank m = lo(r) + o), read from the pair table at (min(r, m), |r - m|). Rows a chunk at a time (the
    rank-ordered vectors of a chunk: at most chunk_floats), the chunk size from the shapes alone."""
    vt, norms = tables(vectors)
    L, V = order.shape
    d, width = vt.shape[0], min(group, V)
    r = torch.arange(V, device=order.device)
    m = (r - group // 2).clamp(0, max(0, V - group))[:, None] + torch.arange(width, device=order.device)   # (V, W)
    pair = torch.minimum(r[:, None], m) * width + (m - r[:, None]).abs()        # (V, W) into the (V, W) pair table
    ns = norms[order]                                                            # (L, V) |e|^2 in rank order
    out = torch.empty(L, V, width, device=order.device)
    step = max(1, chunk_floats // (V * max(d, width)))
    for i in range(0, L, step):
        es = vt.index_select(1, order[i:i + step].reshape(-1)).view(d, -1, V)   # (d, rows, V) e in rank order
        dot = _pair_dots(es, width).view(es.shape[1], -1)[:, pair]              # (rows, V, W) <e_z, e_y>
        out[i:i + step] = ns[i:i + step][:, m] + ns[i:i + step, :, None] - 2 * dot
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
        out[i:i + step] = norms[zc] + norms[yc][:, None] - 2 * dots(zt.unbind(0), yt.unbind(0))
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
    out = torch.empty(pos.shape, device=pos.device)
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
