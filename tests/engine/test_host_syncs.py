"""Device -> host reads per verification step: every registered method under both noises, on the stub target
(engine/stub.py, V = 64 on 6x6), counted by engine/syncs.HostReads (.item, .tolist, .cpu, .numpy, bool / int / float
/ index of a tensor) in every step after the prefill; the first step also builds the run's tables once, so the
bound holds for every later step. AR and the Jacobi family read at most 2 values a step: the accepted count, then
one packed record (tokens, events, next drafts). The tree walks without CASCADE's budget read at most twice a step:
the root's level, then every level of the subtree the walk goes into at once (levelpack.Ahead in treewalk._ahead,
keyed._keyed_ahead); SJD-PAC's next candidates ride in those reads (pac.LevelsAhead, for every end of the walk the
read decides), so its propose reads nothing after the first step and a step reads at most twice, checked on the 6x6
stub and at Lumina-mGPT's vocabulary and codebook width, with steps whose walk goes below the root.
CASCADE reads as the other walks while its levels fit the budget unscaled (engine/budgetwalk.py): the root's level
with its groups formed where the cosines live, packed with the cosines, its budget test and its Sibling masses; then
every level of the subtree the walk goes into, each with its own path's budget test; a root kid whose group holds
more than two other tokens has the root's level read again from the read groups, and a level the budget must scale
reads once per fit build (verify.fit_level: 18) and once more packed, the next subtree then read anew
(test_cascade_reads_exactly counts them)."""
import pytest
import torch

from specviz.core.sampling import draw, sample
from specviz.engine import families, groups, registry
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from specviz.engine.stub import StubTarget, stub_factory
from specviz.engine.syncs import HostReads
from tests.support.toy import toy

TARGET = 2.0
WALKS = (("sd", "papers"), ("sd", "keyed"), ("lantern", "papers"), ("lantern", "keyed"))   # walks without groups


def reads_per_step(method: str, noise: str, record: bool = True, vocab: int = 64, dims: int = 8,
                   grid: tuple[int, int] = (6, 6)) -> tuple[list, dict]:
    """The reads of every verification step of a run, in order, and their kinds (all steps together)."""
    model = StubTarget(vocab, grid, dims=dims)
    gen = decode(model, RunConfig(method=method, prompt="stub", noise=noise), stub_factory, record=record)
    next(gen)                                                  # the prefill's token: once per run, not a step
    counts, names = [], {}
    while True:
        with HostReads() as h:
            if next(gen, None) is None:
                break
        counts.append(h.count)
        names = {k: names.get(k, 0) + v for k, v in (names | h.names).items()}
    return counts, names


def test_the_counter_counts_every_kind_of_read():
    t = torch.tensor([1.5, 2.0])
    with HostReads() as h:
        t[0].item(), t.tolist(), t.cpu(), t.numpy(), bool(t[0] > 0), int(t[1]), float(t[0]), [0, 1, 2][t[1].long()]
        t.sum(), t * 2, t[0]                                    # no reads
    assert h.count == 8 and set(h.names) == {"item", "tolist", "cpu", "numpy", "__bool__", "__int__", "__float__",
                                               "__index__"}


def check_reads(method: str, noise: str, **shape) -> None:
    """Every step after the first reads at most TARGET times, every method; the first step also builds the run's
    tables once (the stub drafter's top tokens, LANTERN's neighbours, GSD's vectors)."""
    counts, names = reads_per_step(method, noise, **shape)
    later = counts[1:]
    assert len(later) >= 5, (method, noise, counts)
    assert max(later) <= TARGET, (method, noise, counts, names)


@pytest.mark.parametrize("noise", ["papers", "keyed"])
@pytest.mark.parametrize("method", list(registry.METHODS))
def test_host_reads_per_verification_step(method, noise):
    check_reads(method, noise)


def chain_reads_within_two():
    """The mutation check's detector (tests/mutation/mutants_engine_cost.py): SJD and CSD under both noises."""
    for method in ("sjd", "csd"):
        for noise in ("papers", "keyed"):
            check_reads(method, noise)


def test_chain_reads_within_two():
    chain_reads_within_two()


WIDE = dict(vocab=2048, dims=256, grid=(3, 4))    # Lumina-mGPT's 256-dim codebook vectors, a few thousand codes


def gsd_wide_reads_within_two():
    """GSD with wide code vectors (the shape of Lumina-mGPT's codebook) under both noises: its rows and its cells at
    the drafts take the sorted and window paths at any width (engine/gsd_sorted.py), whose chunks are sized by the
    shapes, so a step still reads at most twice (the mutation check's detector, tests/mutation/mutants_gsd_wide.py)."""
    for noise in ("papers", "keyed"):
        check_reads("gsd", noise, **WIDE)


def test_gsd_wide_reads_within_two():
    gsd_wide_reads_within_two()


def tree_reads_within_ceiling():
    """The mutation check's detector (tests/mutation/mutants_tree_reads.py): SD and LANTERN under both noises."""
    for method, noise in WALKS:
        check_reads(method, noise)


def row_level_walks_read_at_most_twice():
    """The mutation check's detector (tests/mutation/mutants_tree_reads.py): walks whose siblings carry recorded laws
    (the row-wise levels, verify.level_tensors: the toy model's sampled EAGLE tree; the stub's are point masses) read
    at most twice a walk, counted around the walk alone (the toy's drafter reads on its own)."""
    seen = []

    def counted(c, tree, *args):
        with HostReads() as h:
            walk = real(c, tree, *args)
        seen.append((h.count, any(law is not None for law in tree.laws[1:])))
        return walk
    real, mp = families.walk_tree, pytest.MonkeyPatch()
    mp.setattr(families, "walk_tree", counted)
    try:
        model, factory = toy(codes=12, grid=3)
        drain(decode(model, RunConfig(method="sd", prompt="red house", tree_depth=3, tree_topk=3, tree_nodes=4,
                                      tree_sampling="sample"), factory))
    finally:
        mp.undo()
    assert len(seen) > 3 and all(laws for _, laws in seen) and max(n for n, _ in seen) <= 2, seen


def test_row_level_walks_read_at_most_twice():
    row_level_walks_read_at_most_twice()


def grouped_and_proactive_reads_within_ceiling():
    """The mutation check's detector (tests/mutation/mutants_tree_reads.py): CASCADE and SJD-PAC under both noises."""
    for method in ("cascade", "sjdpac"):
        for noise in ("papers", "keyed"):
            check_reads(method, noise)


def test_grouped_and_proactive_reads_within_ceiling():
    grouped_and_proactive_reads_within_ceiling()


LUMINA_CODES = dict(vocab=8192, dims=256)     # Lumina-mGPT's 8,192 image codes and 256-dim codebook vectors


def pac_reads_within_two():
    """The mutation check's detector (tests/mutation/mutants_pac_ahead.py): SJD-PAC under both noises, on the 6x6
    stub and at Lumina-mGPT's codes, reads at most twice in every step after the first, steps whose walk goes below
    the root's level (more than one token committed; 3 reads before its candidates rode in the walk's reads)
    included."""
    for shape in (dict(grid=(6, 6)), dict(LUMINA_CODES, grid=(6, 6))):
        for noise in ("papers", "keyed"):
            gen = decode(StubTarget(shape.get("vocab", 64), shape["grid"], dims=shape.get("dims", 8)),
                         RunConfig(method="sjdpac", prompt="stub", noise=noise), stub_factory)
            next(gen)
            done, seen = 1, []
            while (step := _counted(gen)) is not None:
                seen.append((step[0], len(step[1].tokens) - done))
                done = len(step[1].tokens)
            later = seen[1:]
            assert len(later) >= 5 and max(r for r, _ in later) <= TARGET, (shape, noise, seen)
            assert any(t > 1 for _, t in later), (shape, noise, seen)          # walks below the root


def test_pac_reads_within_two():
    pac_reads_within_two()


def test_tree_walks_read_at_most_twice_a_step():
    """Every step after the first (whose extra reads are the stub drafter's table, once per run) reads once when its
    walk ends at the root's level and twice however much deeper it went (levelpack.Ahead: the root's level, then
    every level of the subtree the walk goes into); the levels are those the recorded events show (each walked
    level judges a sibling of one parent), and the check covers walks of three levels and more."""
    for method, noise in WALKS:
        gen = decode(StubTarget(64, (6, 6)), RunConfig(method=method, prompt="stub", noise=noise), stub_factory)
        next(gen)
        seen = []
        while True:
            with HostReads() as h:
                prog = next(gen, None)
            if prog is None:
                break
            parents = {e.parent for e in prog.step.events if e.decision in ("exact", "relaxed", "rejected")}
            seen.append((h.count, max(1, len(parents))))
        assert len(seen) > 5 and all(got == min(levels, 2) for got, levels in seen[1:]), (method, noise, seen)
        assert any(levels > 2 for _, levels in seen[1:])            # deeper walks still read twice


FIT_READS = 18 + 1       # verify.fit_level's builds (s = 1, s = 0, 16 bisection steps), then the fitted level packed


def expected_cascade_reads(scaled: list, exact: bool) -> int:
    """A CASCADE step's reads from its walked levels (root first; scaled: the budget scaled the level) and whether the
    root's groups kept the device sums (groups.Groups.exact): the root's read (+1 rebuilt from the read groups), one
    read for the subtree the walk goes into below the root or below a scaled level, FIT_READS per scaled level."""
    reads = 1 + (not exact)
    for i, sc in enumerate(scaled):
        reads += (i == 1 or (i > 1 and scaled[i - 1])) + FIT_READS * sc
    return reads


CASCADE_RUNS = (dict(), dict(cascade_budget=0.05, tau_pos=0.3, tau_seq=0.3))   # fitting; wide groups, scaled levels


def cascade_reads_exactly():
    """The mutation check's detector (tests/mutation/mutants_tree_reads.py): every CASCADE step after the first reads
    exactly expected_cascade_reads of its walked levels (the recorded events: one level per judged parent, scaled
    when its events carry a scale below 1) and of the root's Groups.exact (spied); at the stub's defaults a step
    reads once when its walk ends at the root's level and twice however deep it goes, under both noises; the runs
    cover walks of three levels, wide root groups, scaled levels and walks that go on below one."""
    seen, spy, mp = [], [], pytest.MonkeyPatch()
    real = groups.Groups.exact
    mp.setattr(groups.Groups, "exact", lambda self, kids: spy.append(real(self, kids)) or spy[-1])
    try:
        for noise in ("papers", "keyed"):
            for kw in CASCADE_RUNS:
                gen = decode(StubTarget(64, (6, 6)), RunConfig(method="cascade", prompt="stub", noise=noise, **kw),
                             stub_factory)
                next(gen)
                first = True
                while (step := _counted(gen)) is not None:
                    exact = all(spy)
                    spy.clear()
                    reads, prog = step
                    judged = [e for e in prog.step.events if e.decision in ("exact", "relaxed", "rejected")]
                    by = {}
                    for e in judged:
                        by.setdefault(e.level, []).append(e.groups is not None and e.groups.scale != 1.0)
                    scaled = [any(by[lv]) for lv in sorted(by)]
                    if not first:
                        seen.append((noise, tuple(kw), reads, expected_cascade_reads(scaled, exact), scaled, exact))
                    first = False
    finally:
        mp.undo()
    assert len(seen) > 30 and all(got == want for _, _, got, want, _, _ in seen), seen
    plain = [(got, len(sc)) for _, kw, got, _, sc, _ in seen if not kw]
    assert all(got == min(levels, 2) for got, levels in plain) and max(lv for _, lv in plain) >= 3, plain
    assert any(not ex for *_, ex in seen) and any(any(sc[1:]) for *_, sc, _ in seen), seen
    assert any(any(sc[:-1]) for *_, sc, _ in seen), seen                     # walks that go on below a scaled level


def _counted(gen):
    with HostReads() as h:
        prog = next(gen, None)
    return None if prog is None else (h.count, prog)


def test_cascade_reads_exactly():
    cascade_reads_exactly()


def test_tree_walk_draws_the_papers_uniforms_in_order():
    """Drawing a level's uniforms in one batch and rewinding the generator to what the walk used gives the same
    stream as one draw per judged candidate: the generator after a whole papers' decode is where one more draw
    after the same walk would put it (the golden traces check the values)."""
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    a = torch.cat([torch.rand(1, generator=g1) for _ in range(3)])
    state = g2.get_state()
    b = torch.rand(6, generator=g2)
    g2.set_state(state)
    torch.rand(3, generator=g2)
    assert torch.equal(a, b[:3]) and torch.equal(torch.rand(4, generator=g1), torch.rand(4, generator=g2))
    law = torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
    u = torch.tensor([0.25, 0.6])
    assert draw(law, u).tolist() == [1, 1]
    g = torch.Generator().manual_seed(9)
    want = sample(law, g)
    assert torch.equal(draw(law, torch.rand(2, generator=torch.Generator().manual_seed(9))), want)
