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
