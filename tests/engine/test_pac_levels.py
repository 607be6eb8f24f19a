"""SJD-PAC's candidates of every level in one read (drafters/pac.papers_levels, noise.Noise.orders): the same
tokens, laws and generator state as drawing level by level (pac.first_candidate + pac.draw_candidates; noise.order),
including levels whose law runs out of mass before the width and coupled first candidates."""
import pytest
import torch

from specviz.core import noise as keyed_noise
from specviz.engine.drafters import pac
from specviz.engine.syncs import HostReads

V = 10


def _law(g, support):
    w = torch.zeros(V)
    idx = torch.randperm(V, generator=g)[:support]
    w[idx] = torch.rand(support, generator=g) + 0.05
    return w / w.sum()


def _carries(seed):
    """A mix of no carry, a stale law alone, and an old draft with its law: laws with 1, 2 or all V codes."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for d in range(7):
        kind = (seed + d) % 4
        law = _law(g, (1, 2, V)[d % 3])
        if kind == 0:
            out.append(None)
        elif kind == 1:
            out.append(pac.Carry(law=law))
        else:
            pi = _law(g, (2, V)[d % 2])
            x = int(torch.multinomial(pi, 1, generator=g))
            out.append(pac.Carry(x, pi, law))
    return out


def _level_by_level(carries, uniform, widths, gen):
    out = []
    for c, w in zip(carries, widths):
        x0, law = pac.first_candidate(c, uniform, gen)
        out.append((pac.draw_candidates(x0, law, w, gen), law))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_papers_levels_equal_the_level_by_level_draws(seed):
    carries, uniform = _carries(seed), torch.full((V,), 1.0 / V)
    widths = [3, 3, 2, 1, 4, 3, 1]
    g1, g2 = torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
    want = _level_by_level(carries, uniform, widths, g1)
    with HostReads() as h:
        got = pac.papers_levels(carries, uniform, widths, g2)
    assert [t for t, _ in got] == [t for t, _ in want] and all(torch.equal(a, b) for (_, a), (_, b) in zip(got, want))
    assert h.count == 1                                      # every level's candidates in one read
    assert torch.equal(torch.rand(5, generator=g1), torch.rand(5, generator=g2))   # the generator where it was
    assert any(len(t) < w for (t, _), w in zip(want, widths))      # a level ran out of mass (fewer uniforms used)


def test_keyed_orders_equal_order_row_by_row():
    noise = keyed_noise.READINGS[keyed_noise.VERSION](3, V)
    g = torch.Generator().manual_seed(4)
    laws = torch.stack([_law(g, s) for s in (1, 2, V, V, 3)])
    widths = [3, 3, 4, 1, 2]
    with HostReads() as h:
        got = noise.orders(7, laws, widths)
    assert h.count == 1
    assert got == [noise.order(7 + i, laws[i], w) for i, w in enumerate(widths)]
    assert [len(t) for t in got] == [1, 2, 4, 1, 2]


def _reference_vector(carries, uniform, widths, gen):
    """levels_t's vector [uniforms used, widths[d] tokens of each level d, -1 where its law ran out] drawn level by
    level from gen (first_candidate + draw_candidates)."""
    used, toks = 0, []
    for (t, _), c, w in zip(_level_by_level(carries, uniform, widths, gen), carries, widths):
        used += (2 if c is not None and c.law is not None and c.x >= 0 else 1) + len(t) - 1
        toks += t + [-1] * (w - len(t))
    return [used] + toks


def test_levels_rows_equal_each_job_drawn_alone():
    """pac.levels_rows (every end of a level read at once, randomness.PapersAhead.levels_ends): each job's vector is
    the one drawn level by level from the stream at its own start, with jobs of different lengths and widths at the
    same level (a wide level in one job, narrow in another: the stage still ends there), laws out of mass and
    coupled first candidates."""
    uniform, out_of_mass = torch.full((V,), 1.0 / V), 0
    for seed in range(6):
        widths = [[3, 3, 2, 1, 4, 3, 1], [1, 2, 3], [3, 1, 1, 1, 2], [2]][seed % 4:] + [[1, 4, 1, 3]]
        jobs = [(_carries(seed + 3 * i)[:len(ws)], ws, 5 * i + seed % 3) for i, ws in enumerate(widths)]
        g = torch.Generator().manual_seed(seed)
        stream = torch.rand(200, generator=g)
        want = []
        for cs, ws, start in jobs:
            g.manual_seed(seed)
            torch.rand(start, generator=g)
            want += _reference_vector(cs, uniform, ws, g)
        with HostReads() as h:
            got = pac.levels_rows(jobs, uniform, stream)
        assert h.count == 0 and got.tolist() == want
        out_of_mass += want.count(-1)
    assert out_of_mass > 0


def test_level_laws_equal_each_level_drawn_alone():
    """pac.level_laws (every level's sibling laws in one tensor) to the bits of norm(base with the earlier
    candidates zeroed), level by level and candidate by candidate."""
    g = torch.Generator().manual_seed(1)
    levels = [([3, 1, 7], _law(g, V)), ([4], _law(g, V)), ([], _law(g, V)), ([0, 9], _law(g, 3))]
    got = pac.level_laws(levels)
    for (toks, base), laws in zip(levels, got):
        b = base.clone()
        assert len(laws) == len(toks)
        for t, law in zip(toks, laws):
            assert torch.equal(law, b / b.sum())
            b[t] = 0.0
