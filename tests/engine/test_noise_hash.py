"""Keyed noise reading 2 (core/noise.py): the counter-based uniform U(seed, pos, purpose, code), its readings and
the version a keyed trace records."""
import numpy as np
import torch
from scipy import stats

from specviz.core import noise
from specviz.core.sampling import keyed_uniforms, race, race_noise
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from specviz.engine.randomness import Keyed, of_config
from specviz.engine.stub import StubTarget, stub_factory

V = 16384


def block(seed=0, positions=range(62), purpose="race", vocab=V):
    return noise.uniform_block(seed, list(positions), purpose, vocab)


def test_the_int32_arithmetic_wraps_as_the_python_reference():
    """torch's int32 products wrap modulo 2^32 and its right shift is arithmetic: mix_t, code_hash_t and the block
    equal the Python-int reference bit for bit, at the extremes and on random 32-bit inputs."""
    g = np.random.default_rng(0)
    xs = [0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 0x80000001] + g.integers(0, 2 ** 32, 20_000).tolist()
    got = noise.mix_t(torch.tensor([noise._signed(x) for x in xs], dtype=torch.int32)).tolist()
    assert [v & 0xFFFFFFFF for v in got] == [noise.mix(x) for x in xs]
    codes = list(range(0, 1 << 20, 997)) + [V - 1, (1 << 20) - 1]
    assert [v & 0xFFFFFFFF for v in noise.code_hash_t(torch.tensor(codes)).tolist()] == \
        [noise.code_hash(c) for c in codes]
    b = block(seed=2 ** 63 - 1, positions=[0, 575, 10 ** 9])
    for i, pos in enumerate([0, 575, 10 ** 9]):
        for v in (0, 1, 4095, V - 1):
            assert float(b[i, v]) == noise.uniform(2 ** 63 - 1, pos, "race", v)


def test_uniform_in_the_unit_interval():
    """~1e6 values (62 positions x 16,384 codes, fixed seed): in [0, 1), KS and a 1,000-bin chi-square against
    the uniform law."""
    u = block().flatten().double().numpy()
    assert u.min() >= 0.0 and u.max() < 1.0 and len(u) > 1e6
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    counts = np.bincount((u * 1000).astype(int), minlength=1000)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_positions_purposes_and_codes_are_uncorrelated():
    """Correlations over 1e6 pairs stay within 5 / sqrt(n): position i against i + 1, one purpose against another at
    the same position, code v against v + 1, seed s against s + 1."""
    race_u, accept_u = block(), block(purpose="accept")
    pairs = [(race_u[:-1], race_u[1:]), (race_u, accept_u), (race_u, block(purpose="fresh")),
             (race_u[:, :-1], race_u[:, 1:]), (race_u, block(seed=1))]
    for a, b in pairs:
        a, b = a.flatten().double().numpy(), b.flatten().double().numpy()
        assert abs(np.corrcoef(a, b)[0, 1]) < 5 / np.sqrt(len(a)), (a[:3], b[:3])


def test_equal_keys_give_equal_values_on_every_block_shape():
    """A (1, V) block, an (N, V) block, uniforms at given codes and the host's single value agree to the bit."""
    big = block(seed=3, positions=[9, 10, 11, 12])
    one = block(seed=3, positions=[11])
    assert torch.equal(big[2], one[0])
    codes = torch.tensor([5, 16383, 0, 777])
    at = noise.uniform_at(3, [9, 10, 11, 12], "race", codes)
    assert torch.equal(at, big[torch.arange(4), codes])
    assert [noise.uniform(3, p, "race", int(c)) for p, c in zip([9, 10, 11, 12], codes)] == at.tolist()


def test_the_race_samples_the_law_under_reading_2():
    g = torch.Generator().manual_seed(0)
    p = torch.rand(6, generator=g) + 0.05
    p = p / p.sum()
    n = noise.Noise(1, 6)
    draws = n.races(0, p[None].expand(6000, -1)).numpy()
    want = 6000 * (p.double() / p.double().sum()).numpy()
    assert stats.chisquare(np.bincount(draws, minlength=6), want).pvalue > 1e-3


def test_kept_rows_do_not_depend_on_the_order_asked():
    """The kept window gives every position's row as drawn alone, whatever was asked before: forward, backward,
    across the window's end, and for reading 1 too."""
    for reading in (noise.Noise, noise.NoiseV1):
        ref = reading(7, 64)
        want = {p: ref._draw_rows([p], torch.device("cpu"))[0] for p in range(0, 200)}
        a = reading(7, 64)
        asks = [(3, 10), (3, 10), (12, 16), (60, 16), (70, 8), (5, 3), (150, 40), (100, 1), (199, 1)]
        for pos, k in asks:
            got = a.rows(pos, k)
            assert all(torch.equal(got[i], want[pos + i]) for i in range(k)), (reading, pos, k)
        assert torch.equal(a.scores(4, torch.full((64,), 1 / 64)), a._score(torch.full((64,), 1 / 64), want[4]))


def test_reading_1_is_the_old_generator_stream():
    """NoiseV1 draws what the engine drew before reading 2 (a generator seeded per row / per value)."""
    old = noise.NoiseV1(7, 16)
    assert torch.equal(old.rows(3, 1)[0], race_noise(7, 3, 16).log())
    assert old.u(3, 5) == float(keyed_uniforms(7, 3, "accept", 1, 5)[0])
    assert old.fresh(2) == min(15, int(float(keyed_uniforms(7, 2, "fresh", 1)[0]) * 16))
    assert torch.equal(old.accept_us(4, torch.tensor([1, 2])), torch.stack([old.u_t(4, 1), old.u_t(5, 2)]))
    law = torch.full((16,), 1 / 16)
    assert old.race(3, law) == int(race(law, race_noise(7, 3, 16)))
    assert noise.Noise(7, 16).uniform(3, "accept", 5) != old.u(3, 5)


def test_reading_2_accept_uniforms_equal_the_single_values():
    n = noise.Noise(7, V)
    x = torch.tensor([3, 16000, 3])
    assert n.accept_us(40, x).tolist() == [n.u(40, 3), n.u(41, 16000), n.u(42, 3)]
    assert float(n.u_t(40, 3)) == n.u(40, 3)


def _trace(noise_kind: str):
    model = StubTarget(64, (4, 4), 8)
    return drain(decode(model, RunConfig(method="csd", prompt="stub", noise=noise_kind, window=4, lam=0.5),
                        stub_factory)).trace


def test_a_keyed_trace_records_its_reading():
    """The trace's config says which reading drew it; a sampled token's target_sample is itself under keyed noise
    (the race's x*) and absent in the papers' noise; the papers' bound is summed only for the papers' noise."""
    keyed, papers = _trace("keyed"), _trace("papers")
    assert keyed.config.get("noise_version") == noise.VERSION == 2 and "noise_version" not in papers.config
    assert noise.version_of(keyed.config) == 2 and noise.version_of({"noise": "keyed"}) == 1
    assert Keyed(0, 8, 1).noise.version == 1 and Keyed(0, 8).noise.version == 2
    assert of_config(keyed.config).promises is False and of_config(papers.config).promises is True
    sampled = {"ar", "bonus", "resampled"}
    assert all(ev.target_sample == ev.token for _, ev in keyed.events() if ev.decision in sampled)
    assert all(ev.target_sample is None for _, ev in papers.events())
    assert keyed.summary["tv_bound"] is None and isinstance(papers.summary["tv_bound"], float)
