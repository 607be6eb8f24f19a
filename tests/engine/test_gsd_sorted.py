"""GSD "ours" in the sorted space (engine/gsd_sorted.py) gives the per-cell path's numbers (rules.gsd with few judged
cells), to the bit: windows at both ends of the ranking, a vocabulary no larger than the window, tied target masses
(top-k zeros), cells the draft never proposes, both filters binding."""
import pytest
import torch

from specviz.engine import gsd_sorted, rules
from specviz.engine.gsd_sorted import ours_sorted

SHAPES = [(6, 40, 8), (4, 12, 4), (3, 5, 8), (3, 8, 8), (3, 9, 8), (4, 14, 14), (5, 30, 3), (2, 7, 1)]


def laws(L, V, seed):
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(L, V, generator=g) * 2).softmax(-1)
    q[0, : V // 3] = q[0, V // 3]                                 # ties in the ranking
    q[1] = torch.where(q[1] < q[1].median(), torch.zeros_like(q[1]), q[1])   # top-k style zeros
    q = q / q.sum(-1, keepdim=True)
    p = (torch.randn(L, V, generator=g) * 2).softmax(-1)
    p[0] = rules.point_mass(torch.tensor([V // 2]), V)[0]         # a fresh (point-mass) slot
    p[-1, ::3] = 0                                                 # cells never proposed
    return q, p, torch.randn(V, 3, generator=g) * 0.5


def per_cell(q, p, vecs, group, gap, dist):
    """rules.gsd's per-cell path (the sorted path switched off)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(rules, "_SORTED_FROM", 0)
    try:
        return rules.gsd(q, p, vecs, group, gap, dist)
    finally:
        mp.undo()


@pytest.mark.parametrize("L,V,group", SHAPES)
def test_sorted_path_equals_the_per_cell_path(L, V, group):
    below, relaxed = False, False
    for seed in range(3):
        q, p, vecs = laws(L, V, seed)
        for gap, dist in ((1.0, 100.0), (0.05, 0.8), (0.02, 0.3)):
            want = per_cell(q, p, vecs, group, gap, dist)
            got = ours_sorted(q, p, vecs, group, gap, dist)
            assert torch.equal(got, want), (L, V, group, seed, gap, dist)
            below |= bool((want < 1).any())
            relaxed |= bool((want > rules.lossless(q, p) + 1e-6).any())
    assert below and (relaxed or group == 1)     # the cases bite: some cells rejected, some relaxed by their group


def test_rules_gsd_takes_the_sorted_path_when_most_cells_are_judged():
    q, p, vecs = laws(4, 40, 0)
    calls = []
    mp = pytest.MonkeyPatch()
    mp.setattr(rules, "ours_sorted", lambda *a: calls.append(1) or ours_sorted(*a))
    try:
        rules.gsd(q, p, vecs, 8, 0.05, 0.8)                       # 3 full rows of 4: the sorted path
        rules.gsd(q, rules.point_mass(torch.tensor([1, 2, 3, 4]), 40), vecs, 8, 0.05, 0.8)   # 4 cells: per cell
    finally:
        mp.undo()
    assert calls == [1]


def window_cells_equal_the_full_rows(shapes=SHAPES + [(16, 200, 8), (4, 64, 2)]) -> None:
    """gsd_sorted.window_at (GSD "ours" at the drafted cells, two top-k's, no sort) gives rules.gsd's full rows at
    those cells to the bit: ties in the ranking, top-k zeros, a point-mass slot, cells never proposed (p(x) = 0),
    windows at both ends of the ranking (x the most and the least likely code), both filters binding."""
    seen = 0
    for L, V, group in shapes:
        if not 1 < group < V:
            continue
        for seed in range(3):
            q, p, vecs = laws(L, V, seed)
            g = torch.Generator().manual_seed(100 + seed)
            x = torch.randint(V, (L,), generator=g)
            q[-1, :V // 2] = q[-1, 0]                             # a tied run of positive masses, x inside it
            q[-1] = q[-1] / q[-1].sum()
            x[0], x[1], x[-1] = q[0].argmin(), q[1].argmax(), V // 4 + seed
            for gap, dist in ((1.0, 100.0), (0.05, 0.8), (0.02, 0.3)):
                want = rules.gsd(q, p, vecs, group, gap, dist)[torch.arange(L), x]
                got = gsd_sorted.window_at(q, p, x, vecs, group, gap, dist)
                assert torch.equal(got, want), (L, V, group, seed, gap, dist, got, want)
                seen += int((want < 1).sum())
    assert seen > 20                                              # cases where the window does not accept outright


def test_window_cells_equal_the_full_rows():
    window_cells_equal_the_full_rows()


WIDE_SHAPES = [(5, 300, 8), (4, 41, 7), (3, 6, 8), (6, 9, 8)]    # (L, V, G): ends, V <= G, an odd G


def wide_case(L, V, seed, dims=256):
    """laws() with code vectors of `dims` coordinates (Lumina-mGPT's 256), scaled so squared distances are near 2."""
    q, p, _ = laws(L, V, seed)
    g = torch.Generator().manual_seed(50 + seed)
    return q, p, torch.randn(V, dims, generator=g) / dims ** 0.5


def chunk_sizes(count: int, per: int) -> list[int]:
    """chunk_floats for `count` rows (cells) of `per` floats each: one chunk; three, the last one shorter; and for a
    few rows, one a chunk."""
    k = count // 3 + 1
    return [gsd_sorted.CHUNK_FLOATS, k * per + per - 1] + ([1] if count <= 8 else [])


def wide_distances_agree() -> None:
    """One d2 arithmetic at 256 dims: the sorted rows' (L, V, W) distances (gsd_sorted._sorted_d2, row chunks) equal
    rules.gsd's per-cell distances (member_d2, cell chunks) of every cell's window to the bit, whatever the chunking,
    and are |e_z - e_y|^2 of the right members (float64 reference)."""
    for L, V, group in WIDE_SHAPES:
        q, _, vecs = wide_case(L, V, L + V)
        order = q.argsort(dim=-1, descending=True, stable=True)
        W, d = min(group, V), vecs.shape[1]
        r = torch.arange(V).repeat(L)
        rows = torch.arange(L).repeat_interleave(V)
        pos = (r - group // 2).clamp(0, max(0, V - group))[:, None] + torch.arange(W)
        z, y = order[rows[:, None], pos], order[rows, r]
        ref = ((vecs.double()[z] - vecs.double()[y][:, None]) ** 2).sum(-1)
        for chunk in chunk_sizes(L, V * max(d, W)):
            d2 = gsd_sorted._sorted_d2(vecs, order, group, chunk).reshape(-1, W)
            assert torch.allclose(d2.double(), ref, atol=1e-5), (L, V, group, chunk)
            for cells in chunk_sizes(L * V, W * d):
                assert torch.equal(gsd_sorted.member_d2(vecs, order, rows, r, pos, cells), d2), (L, V, group, cells)


def test_wide_distances_agree():
    wide_distances_agree()


def wide_rules_agree() -> None:
    """GSD "ours" at 256 dims: the sorted rows (ours_sorted, row chunks), rules.gsd's per-cell path (cell chunks) and
    the cells at the drafts (window_at) give the same acceptance to the bit, with the distance threshold at a computed
    distance (a d2 one ulp lower in one path would flip that member) and both filters binding."""
    seen = 0
    for L, V, group in WIDE_SHAPES:
        for seed in (0,):
            q, p, vecs = wide_case(L, V, seed)
            order = q.argsort(dim=-1, descending=True, stable=True)
            d2 = gsd_sorted._sorted_d2(vecs, order, group, gsd_sorted.CHUNK_FLOATS).flatten().sort().values
            x = torch.randint(V, (L,), generator=torch.Generator().manual_seed(7 + seed))
            x[0], x[1] = q[0].argmin(), q[1].argmax()
            at = [float(d2[int(f * (len(d2) - 1))]) for f in (0.3, 0.45, 0.6, 0.75)]    # computed distances
            for gap, dist in ((0.05, at[0]), (1.0, at[1]), (1.0, at[2]), (0.2, at[3])):
                mp = pytest.MonkeyPatch()
                mp.setattr(rules, "_CHUNK_FLOATS", chunk_sizes(int((p > 0).sum()), min(group, V) * 256)[1])
                try:
                    want = per_cell(q, p, vecs, group, gap, dist)
                finally:
                    mp.undo()
                for chunk in chunk_sizes(L, V * 256)[:1 if gap < 1 else None]:     # row chunks: once per case
                    got = ours_sorted(q, p, vecs, group, gap, dist, chunk)
                    assert torch.equal(got, want), (L, V, group, seed, gap, dist, chunk)
                if 1 < group < V:
                    at = gsd_sorted.window_at(q, p, x, vecs, group, gap, dist)
                    assert torch.equal(at, want[torch.arange(L), x]), (L, V, group, seed, gap, dist)
                seen += int(((want < 1) & (want > rules.lossless(q, p) + 1e-6)).sum())
    assert seen > 20                  # cells relaxed by their group but not accepted outright: the filters bite


def test_wide_rules_agree():
    wide_rules_agree()


def tables_follow_the_vectors() -> None:
    """gsd_sorted.tables: the transposed vectors and their squared norms, computed once per tensor and again after
    an in-place change of it."""
    vecs = torch.randn(30, 256, generator=torch.Generator().manual_seed(3))
    vt, norms = gsd_sorted.tables(vecs)
    assert torch.equal(vt, vecs.T) and torch.allclose(norms, (vecs * vecs).sum(-1)) and gsd_sorted.tables(vecs)[0] is vt
    vecs.mul_(2)
    vt, norms = gsd_sorted.tables(vecs)
    assert torch.equal(vt, vecs.T) and torch.allclose(norms, (vecs * vecs).sum(-1))
    with torch.inference_mode():                              # a model's table made under inference_mode: no version
        frozen = vecs * 1
    vt, norms = gsd_sorted.tables(frozen)
    assert torch.equal(vt, frozen.T) and torch.allclose(norms, (frozen * frozen).sum(-1))
    assert gsd_sorted.tables(frozen)[0] is vt


def test_tables_follow_the_vectors():
    tables_follow_the_vectors()
