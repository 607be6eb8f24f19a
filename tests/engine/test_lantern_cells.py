"""LANTERN(++) on few judged cells (rules.lantern's local path: a tree's point-mass siblings) gives the numbers of
the whole-vocabulary rule lossless(lantern_mass(q), p), to the bit: both budgets, several cells per row, a row
without any, vocabularies smaller than k. The rule at the drafts alone (rules.lantern_at, the record's `at`: the
tree walks' point-mass levels ask it per sibling) gives the whole rows' value at each draft, to the bit."""
import torch

from specviz.engine import rules


def cases():
    g = torch.Generator().manual_seed(0)
    for V, L, k in ((12, 3, 3), (64, 5, 8), (9, 4, 8), (300, 2, 4)):
        nb = torch.stack([torch.randperm(V, generator=g)[:min(k, V - 1)] for _ in range(V)])
        for trial in range(4):
            q = (torch.randn(L, V, generator=g) * 2).softmax(-1)
            p = torch.zeros(L, V)
            p[torch.arange(L), torch.randint(V, (L,), generator=g)] = 1.0
            if trial == 1:
                p[0] = 0                                                # a row nothing is judged in
            if trial == 2:
                p[:, :2], p[:, 2:] = 0.5, 0.0                           # two cells per row
            for budget in (0.05, 0.25, rules.lantern_budget(q, 0.0, 3.0), rules.lantern_budget(q, 0.0, 10.0)):
                yield q, p, nb, k, budget


def check_cells_equal_the_whole_vocabulary() -> None:
    moved = 0
    for q, p, nb, k, budget in cases():
        want = rules.lossless(rules.lantern_mass(q, nb, k, budget), p)
        assert torch.equal(rules.lantern(q, p, nb, k, budget), want)
        moved += int((want > rules.lossless(q, p)).sum())
    assert moved > 20                                                   # the budgets lend mass in many cases


def test_cells_equal_the_whole_vocabulary():
    check_cells_equal_the_whole_vocabulary()


def check_at_equals_the_rows_at_the_drafts() -> None:
    """lantern_at(q, p, x) == lossless(lantern_mass(q), p)[rows, x] for the drafted cells (a = 1 where p(x) = 0, as
    the rows), under both budgets as the record passes them (a function of q), with k + 1 neighbours in the table as
    the record builds it (the rule reads k of them)."""
    g, moved, seen = torch.Generator().manual_seed(1), 0, set()
    for q, p, _, k, _ in cases():
        if id(q) in seen:
            continue
        seen.add(id(q))
        V, rows = q.shape[1], torch.arange(len(q))
        nb = torch.stack([torch.randperm(V, generator=g)[:min(k + 1, V - 1)] for _ in range(V)])   # as the record's
        for fn in (lambda t: 0.05, lambda t: 0.25, lambda t: rules.lantern_budget(t, 0.0, 3.0),
                   lambda t: rules.lantern_budget(t, 0.0, 10.0)):
            rows_a = rules.lossless(rules.lantern_mass(q, nb, k, fn(q)), p)
            for x in (p.argmax(-1), torch.randint(q.shape[1], (len(q),), generator=g)):
                assert torch.equal(rules.lantern_at(q, p, x, nb, k, fn), rows_a[rows, x])
                moved += int((rows_a[rows, x] > rules.lossless(q, p)[rows, x]).sum())
    assert moved >= 10                                                  # the budgets lend mass in many cases
    q, nb = torch.full((2, 8), 0.125), torch.stack([(torch.arange(1, 5) + v) % 8 for v in range(8)])
    p, x = rules.point_mass(torch.tensor([3, 5]), 8), torch.tensor([3, 5])
    for fn in (lambda t: 0.25, lambda t: rules.lantern_budget(t, 0.0, 3.0)):    # s_2 = B exactly: two neighbours lent
        assert rules.lantern_at(q, p, x, nb, 3, fn).tolist() == [0.375, 0.375]


def test_at_equals_the_rows_at_the_drafts():
    check_at_equals_the_rows_at_the_drafts()
