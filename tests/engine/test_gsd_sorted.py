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
