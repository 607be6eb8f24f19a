"""Point-mass levels (engine/pointlevel.py, verify.point_tensors): a level of distinct point-mass siblings computed
from their cells gives the same bits as the row-wise level (verify.level_tensors, keyed._level over one-hot rows)
wherever a decision or a drawn token depends on it, and the same recorded TVs / couplings up to float rounding;
whole walks under both noises agree with the walks of the same tree whose one-hot laws are given as rows. Plain
functions without fixtures: tests/mutation/mutants_tree.py uses them as detectors."""
import torch

from specviz.core.noise import READINGS, VERSION
from specviz.core.sampling import coupled_accept, tv
from specviz.engine import keyed, pointlevel, rules, treewalk, verify
from specviz.engine.drafters.draft_tree import DraftTree

V = 64


def _q(seed: int, sharp: float = 3.0, zeros: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(V, generator=g) * sharp
    if zeros:
        logits[torch.randperm(V, generator=g)[:zeros]] = float("-inf")
    return logits.softmax(-1)


def _cases():
    """(q, sibling tokens): q's top tokens as siblings (so residuals move a lot), random ones, a q whose mass sits
    on the siblings alone (the last residual empty: safe_norm's fallback), and laws with zeros."""
    for seed in range(12):
        q = _q(seed, sharp=1.0 + seed % 4, zeros=8 * (seed % 3))
        top = q.topk(4).indices.tolist()
        yield q, top
        yield q, torch.randperm(V, generator=torch.Generator().manual_seed(seed))[:3].tolist()
    q = torch.zeros(V)
    q[[5, 9]] = torch.tensor([0.75, 0.25])
    yield q, [5, 9]


def _same(a: verify.Level, b: verify.Level):
    for f in ("b", "exact", "end", "law", "cost"):
        x, y = getattr(a, f), getattr(b, f)
        assert torch.equal(torch.as_tensor(x), torch.as_tensor(y)), (f, x, y)
    assert all(torch.equal(r, s) for r, s in zip(a.targets, b.targets))


def test_point_level_equals_the_row_wise_level_bit_for_bit():
    """Lossless (its rows, and its `at` at the cells) and a CASCADE level at several budgets, cells vs rows."""
    for q, xs in _cases():
        laws = list(rules.point_mass(torch.tensor(xs), V))
        rows = verify.level_tensors(q, laws, xs, lambda j, r, p: (rules.lossless(r[None], p[None])[0], 0.0))
        _same(verify.point_tensors(q, laws, xs, lambda j, r, p: (rules.lossless(r[None], p[None])[0], 0.0)), rows)
        at = lambda j, r, p: (rules.lossless.at(r[None], p[None], torch.tensor([xs[j]]))[0], 0.0)   # noqa: E731
        _same(verify.point_tensors(q, laws, xs, None, cell=at), rows)
        members = [[xs[(j + 1) % len(xs)], (xs[j] + 7) % V, xs[j]] for j in range(len(xs))]
        for left in (0.0, 0.01, 0.2, 5.0):
            _same(verify.cascade_fit(q, laws, xs, members, left, cells=True),
                  verify.cascade_fit(q, laws, xs, members, left))


def test_keyed_point_level_equals_the_row_wise_level_bit_for_bit():
    """keyed._level / level_cost from the cells, and keyed CASCADE through cascade_cell, against one-hot rows."""
    for q, xs in _cases():
        laws = list(rules.point_mass(torch.tensor(xs), V))
        a = rules.lossless(q[None].expand(len(xs), -1), torch.stack(laws))
        cells = a[torch.arange(len(xs)), torch.tensor(xs)]
        _same(keyed._level(q, laws, xs, (cells, [0.0] * len(xs))), keyed._level(q, laws, xs, (a, [0.0] * len(xs))))
        members = [[xs[(j + 1) % len(xs)], (xs[j] + 3) % V] for j in range(len(xs))]
        for left in (0.0, 0.05, 5.0):
            _same(verify.cascade_fit(q, laws, xs, members, left, walk=keyed.keyed_walk, cells=True),
                  verify.cascade_fit(q, laws, xs, members, left, walk=keyed.keyed_walk))


def test_point_tvs_and_couplings_are_the_row_wise_values():
    for q, xs in _cases():
        xt = torch.tensor(xs)
        p = rules.point_mass(xt, V)
        assert torch.allclose(pointlevel.point_tvs(q, q[xt]), tv(p, q[None]), atol=1e-6, rtol=0)
        assert torch.allclose(pointlevel.point_coupled(q, q[xt]), coupled_accept(p, q[None].expand_as(p), xt),
                              atol=1e-6, rtol=0)
        lvl = verify.level_tensors(q, list(p), xs, lambda j, r, p_: (rules.lossless(r[None], p_[None])[0], 0.0))
        want = torch.stack([tv(p[j], r) for j, r in enumerate(lvl.targets)])
        assert torch.allclose(pointlevel.point_tvs_each(lvl.targets, xs), want, atol=1e-6, rtol=0)


def _trees(seed: int):
    """A three-level point-mass tree on q's likely tokens, and the same tree with its one-hot laws as rows."""
    g = torch.Generator().manual_seed(seed)
    toks = torch.randperm(V, generator=g)[:8].tolist()
    parents = [-1, 0, 0, 0, 1, 1, 4, 4, 4]
    depths = [0, 1, 1, 1, 2, 2, 3, 3, 3]
    tokens = [0] + toks
    pm = DraftTree(tokens, parents, depths, [None] * 9)
    rows = DraftTree(tokens, parents, depths, [None] + list(rules.point_mass(torch.tensor(toks), V)))
    q = torch.stack([_q(100 * seed + i, sharp=2.0) for i in range(9)])
    q[0, toks[:3]] += 0.5            # the walk goes down the tree now and then
    q[1, toks[3:5]] += 0.5
    q[4, toks[5:]] += 0.5
    return pm, rows, q / q.sum(-1, keepdim=True)


def _walk_fields(w):
    return (w.path, w.new_token, w.bonus, [(s.node, s.accepted, s.relaxed, s.u) for s in w.judged],
            [(s.b, s.exact, s.p_x, s.q_x, s.tv, s.tv_residual, s.tv_cost, s.coupled or 0.0) for s in w.judged])


def _agree(a, b):
    fa, fb = _walk_fields(a), _walk_fields(b)
    assert fa[:4] == fb[:4], (fa[:4], fb[:4])
    assert torch.allclose(torch.tensor(fa[4]), torch.tensor(fb[4]), atol=1e-6, rtol=0), (fa[4], fb[4])


def test_point_walks_equal_the_walks_over_one_hot_rows():
    """verify_tree and keyed_tree, lossless and LANTERN-like (rows only, no `at`), a point-mass tree against the
    same tree with its laws as one-hot rows: the same decisions, uniforms, tokens, and numbers."""
    def no_at(q, p):
        return rules.lossless(q, p)
    for seed in range(10):
        pm, rows, q = _trees(seed)
        for fn in (rules.lossless, no_at):
            for reads in (1, 2):
                a, b = (treewalk.verify_tree(t, q, fn, torch.Generator().manual_seed(seed), None, 1.0,
                                             lambda d: True, "raw", reads) for t in (pm, rows))
                _agree(a, b)
                noise = READINGS[VERSION](seed, V)
                a, b = (keyed.keyed_tree(t, q, fn, noise, 3, None, 1.0, lambda d: True, "raw", reads)
                        for t in (pm, rows))
                _agree(a, b)
