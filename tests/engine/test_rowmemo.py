"""core/rowmemo.py: a law's per-row numbers (entropy, support size, TV, keyed race winners) computed once per forward.
An answer from memory must equal a fresh computation bit for bit, for the rows asked; a law changed in place, or
another law, is never answered from memory; the entropy offered from the logits is made only for the rows asked and
stays within 4e-7 max(1, H) of -Σ q log q at a real vocabulary."""
from __future__ import annotations

import threading

import torch

from specviz.core import noise, rowmemo, sampling


def _laws(rows=6, vocab=40, seed=0, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(rows, vocab, generator=g) * scale).softmax(-1)


def _fresh(fn, *args):
    rowmemo.forget()
    return fn(*args)


def answers_from_memory_equal_fresh_ones():
    """A prefix block, a middle block, one row as a 1-D law, and a pair of laws (TV), each equal to the function
    computed on its own, after the whole rows were asked first."""
    q, p = _laws(), _laws(seed=1)
    for fn, args in ((sampling.raw_entropy, (q,)), (sampling.support_size, (q,)), (sampling.tv, (p, q))):
        rowmemo.forget()
        fn(*args)                                                 # the whole rows, remembered
        for block in (slice(0, 3), slice(2, 5), slice(5, 6)):
            got = fn(*(a[block] for a in args))
            assert torch.equal(got, _fresh(fn, *(a[block] for a in args))), (fn.__name__, block)
            fn(*args)
        for r in (0, 4):
            got = fn(*(a[r] for a in args))
            assert got.dim() == 0 and torch.equal(got, _fresh(fn, *(a[r] for a in args))), (fn.__name__, r)
            fn(*args)


def a_changed_or_other_law_is_not_answered_from_memory():
    q = _laws()
    rowmemo.forget()
    before = sampling.raw_entropy(q).clone()
    q[1] = torch.full_like(q[1], 1 / q.shape[1])                  # an in-place write: the law at row 1 is uniform
    after = sampling.raw_entropy(q[1:3])
    assert torch.equal(after, _fresh(sampling.raw_entropy, q[1:3])) and not torch.equal(after, before[1:3])
    other = _laws(seed=7)
    rowmemo.forget()
    sampling.raw_entropy(q)
    assert torch.equal(sampling.raw_entropy(other), _fresh(sampling.raw_entropy, other))
    p = _laws(seed=2)
    rowmemo.forget()
    sampling.tv(p, q)
    assert torch.equal(sampling.tv(p[1:3], q[2:4]), _fresh(sampling.tv, p[1:3], q[2:4]))   # rows that do not pair


def offered_entropy_is_made_for_the_rows_asked():
    """target_laws offers the entropies from the logits; asking for rows 2..3 makes those two rows only, and a
    second ask for them makes nothing."""
    made = []
    logits = torch.randn(6, 50, generator=torch.Generator().manual_seed(3)) * 2
    real = sampling.entropy_from_logits
    try:
        sampling.entropy_from_logits = lambda q, z, t=1.0: made.append(len(q)) or real(q, z, t)
        rowmemo.forget()
        q = sampling.target_laws(logits)
        h = sampling.raw_entropy(q[2:4])
        sampling.raw_entropy(q[3])
    finally:
        sampling.entropy_from_logits = real
    assert made == [2]
    assert torch.allclose(h, -(q[2:4] * q[2:4].log()).sum(-1), atol=1e-6)


def entropy_from_logits_is_close_at_a_real_vocabulary():
    """Within 4e-7 max(1, H) of -Σ q log q of the float32 law (float64 reference) at V = 16,384, from flat to peaked
    laws and with a temperature; top-k laws (with -inf logits) are not offered."""
    g = torch.Generator().manual_seed(0)
    for scale, temperature in ((0.1, 1.0), (0.3, 1.0), (3.0, 1.0), (10.0, 1.0), (30.0, 1.0), (3.0, 0.7), (1.0, 1.5)):
        z = torch.randn(16, 16384, generator=g) * scale
        q = (z / temperature).softmax(-1)
        ref = -(q.double() * q.double().clamp_min(1e-300).log()).sum(-1)
        got = sampling.entropy_from_logits(q, z, temperature).double()
        assert ((got - ref).abs() / ref.clamp_min(1)).max() < 4e-7, (scale, temperature)
    rowmemo.forget()
    q = sampling.target_laws(torch.randn(4, 30), top_k=5)
    assert not any(isinstance(e[4], rowmemo.Offered) for e in rowmemo._entries())


def support_size_counts_the_support():
    q = _laws()
    q[:, ::3] = 0
    q[2] = 0
    q[2, 7] = 1
    rowmemo.forget()
    assert torch.equal(sampling.support_size(q), (q > 0).sum(-1).float())


def keyed_races_of_overlapping_windows_are_the_fresh_races():
    """A chain step races rows 0..k-1 at positions n.. and then rows start.. at n + start: the second answer, from
    memory, equals the races computed without it."""
    nz, q = noise.Noise(5, 40), _laws(rows=8)
    rowmemo.forget()
    nz.races(10, q[:7])
    got = nz.races(13, q[3:])
    want = nz.scores(13, q[3:]).argmax(-1)
    assert torch.equal(got, want)
    assert torch.equal(nz.races(14, q[3:]), nz.scores(14, q[3:]).argmax(-1))      # other positions: other rows


def each_thread_has_its_own_memo():
    q = _laws()
    rowmemo.forget()
    sampling.raw_entropy(q)
    seen = []
    t = threading.Thread(target=lambda: seen.append(len(rowmemo._entries())))
    t.start(), t.join()
    assert seen == [0] and len(rowmemo._entries()) == 1


def test_answers_from_memory_equal_fresh_ones():
    answers_from_memory_equal_fresh_ones()


def test_a_changed_or_other_law_is_not_answered_from_memory():
    a_changed_or_other_law_is_not_answered_from_memory()


def test_offered_entropy_is_made_for_the_rows_asked():
    offered_entropy_is_made_for_the_rows_asked()


def test_entropy_from_logits_is_close_at_a_real_vocabulary():
    entropy_from_logits_is_close_at_a_real_vocabulary()


def test_support_size_counts_the_support():
    support_size_counts_the_support()


def test_keyed_races_of_overlapping_windows_are_the_fresh_races():
    keyed_races_of_overlapping_windows_are_the_fresh_races()


def test_each_thread_has_its_own_memo():
    each_thread_has_its_own_memo()
