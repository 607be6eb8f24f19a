"""MC-SJD coupling (every Jacobi method, `--couple`; `mcsjd`) and SJD-PAC (`sjdpac`) keep the AR law
(docs/methods_lossless.md).

Exactness: chi-square against the enumerated AR law on flat toys (set up here, not in tests/support/toy.py), greedy =
AR,
trace invariants. The exact detectors at the top (no sampling) are also the mutation check's
(tests/mutation/mutants_jacobi.py).
"""
import json

import numpy as np
import pytest
import torch

from specviz.core.records import COMMITTING
from specviz.core.trace import Trace
from specviz.engine import rules
from specviz.engine.drafters import jacobi, pac
from specviz.models.scenes import tiny
from tests.engine.test_exactness import chi2_pvalue
from tests.support.toy import OnePrefill, check_decisions, exact_law, run


# ---------------------------------------------------------------------------------------------------- exact detectors
def _laws(seed: int, rows: int, vocab: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random p_old, p_new (rows, V) with the edge cases: a point mass, a law equal to the new one, disjoint."""
    g = torch.Generator().manual_seed(seed)
    p_old = torch.rand(rows, vocab, generator=g)
    p_old = p_old / p_old.sum(-1, keepdim=True)
    p_new = torch.rand(rows, vocab, generator=g) ** 2
    p_new = p_new / p_new.sum(-1, keepdim=True)
    p_old[0] = torch.nn.functional.one_hot(torch.tensor(2), vocab).float()
    p_old[1] = p_new[1]
    p_old[2] = torch.tensor([0.5, 0.5] + [0.0] * (vocab - 2))
    p_new[2] = torch.tensor([0.0, 0.0] + [1.0 / (vocab - 2)] * (vocab - 2))
    return p_old, p_new


def test_coupling_marginal_is_exactly_the_new_law():
    """sum_x p_old(x) [keep(x) 1{y=x} + (1 - keep(x)) fallback_x(y)] = p_new(y), for every row, to float precision."""
    vocab = 6
    p_old, p_new = _laws(0, 5, vocab)
    for r in range(len(p_old)):
        xs = torch.arange(vocab)
        keep, fallback = jacobi.coupling(xs, p_old[r].expand(vocab, -1), p_new[r].expand(vocab, -1))
        out = (p_old[r] * keep) + (p_old[r] * (1 - keep)) @ fallback
        assert torch.allclose(out, p_new[r], atol=1e-6), (r, out, p_new[r])


def test_coupling_keeps_as_often_as_possible():
    """Maximal: P(x' = x) = 1 - TV(p_old, p_new); equal laws never move, disjoint ones always do."""
    vocab = 6
    p_old, p_new = _laws(1, 5, vocab)
    for r in range(len(p_old)):
        keep, _ = jacobi.coupling(torch.arange(vocab), p_old[r].expand(vocab, -1), p_new[r].expand(vocab, -1))
        stay = float((p_old[r] * keep).sum())
        assert abs(stay - (1 - 0.5 * float((p_old[r] - p_new[r]).abs().sum()))) < 1e-6


def test_pac_candidates_p3_output_is_exact():
    """Candidates drawn as draw_candidates does (without replacement), judged in order with sibling_laws (P3):
    the output law of the position is exactly q. Exact enumeration over all ordered candidate pairs."""
    g = torch.Generator().manual_seed(3)
    for _ in range(4):
        base = torch.rand(5, generator=g) ** 2
        base /= base.sum()
        q = torch.rand(5, generator=g) ** 3
        q /= q.sum()
        out = torch.zeros(5)
        for a in range(5):
            for b in range(5):
                if a == b:
                    continue
                prob = float(base[a] * base[b] / (1 - base[a]))       # the draw: a ~ base, b ~ base without a
                laws = pac.sibling_laws(base, [a, b])
                qc = q.clone()
                reach = 1.0
                for tok, law in zip((a, b), laws):
                    acc = rules.lossless(qc[None], law[None])[0]
                    out[tok] += prob * reach * float(acc[tok])
                    reach *= 1 - float(acc[tok])
                    qc = rules.judge(qc[None], law[None], acc[None], torch.tensor([tok]), torch.ones(1)).residual[0]
                out += prob * reach * qc
        assert torch.allclose(out, q, atol=1e-5), (out, q)


# ---------------------------------------------------------------------------------------------------- flat toys
def flat_toy(codes: int, grid: int):
    """A tiny target whose enumerated law is flat: small head weights (no outcome above ~5 %)."""
    model = tiny(codes=codes, grid=grid, seed=4, sharpen=0.4)
    return OnePrefill(model), exact_law(model)          # one prefill for the thousands of runs (bit for bit)


@pytest.fixture(scope="module")
def wide():
    return flat_toy(4, 2)          # 256 outcomes, 4 positions: room for the K=3, D=3 tree


@pytest.fixture(scope="module")
def long():
    return flat_toy(2, 3)          # 512 outcomes, 9 positions: several steps, so drafts carry over and couple


def _flat_enough(law, n):
    v = np.array(list(law.values()))
    assert v.max() < 0.05 and (v * n >= 5).sum() >= 30


@pytest.mark.parametrize("toy_law, n, kw", [
    ("wide", 3000, dict(method="sjdpac", window=14)),
    ("wide", 3000, dict(method="sjdpac", window=4, pac_width=2, pac_depth=2)),
    ("long", 4000, dict(method="mcsjd", window=4)),
    ("long", 4000, dict(method="sjd", window=5, couple=1, init="repeat_horizon")),
    ("long", 4000, dict(method="sjdpac", window=5, pac_width=2, pac_depth=2)),
], ids=["sjdpac-K3D3", "sjdpac-K2D2", "mcsjd", "sjd-couple-repeat", "sjdpac-chain"])
@pytest.mark.slow
def test_chi2_against_the_ar_law(request, toy_law, n, kw):
    model, law = request.getfixturevalue(toy_law)
    _flat_enough(law, n)
    samples = [run(model, None, seed=s, **kw).tokens for s in range(n)]
    assert chi2_pvalue(samples, law) > 1e-3


# ---------------------------------------------------------------------------------------------------- engine
@pytest.fixture(scope="module")
def tm():
    return tiny(codes=16, grid=5, seed=2)


GREEDY = [dict(method="mcsjd", window=6), dict(method="sjd", window=4, couple=1, init="repeat_vertical"),
          dict(method="csd", couple=1, lam=0.0), dict(method="sjdpac"), dict(method="sjdpac", window=13),
          dict(method="sjdpac", window=8, pac_width=2, pac_depth=3), dict(method="sjdpac", pac_depth=1)]


@pytest.mark.parametrize("kw", GREEDY, ids=lambda k: "-".join(str(v) for v in k.values()))
def test_greedy_equals_ar(tm, kw):
    ar = run(tm, None, method="ar", temperature=0.0).tokens
    assert run(tm, None, temperature=0.0, **kw).tokens == ar


@pytest.mark.parametrize("kw", [dict(method="mcsjd", window=5), dict(method="csd", couple=1, lam=0.3, delta=0.8),
                                dict(method="gsd", couple=1), dict(method="sjdpac", window=16),
                                dict(method="sjdpac", window=20, pac_width=4, pac_depth=2)],
                         ids=["mcsjd", "csd-couple", "gsd-couple", "sjdpac", "sjdpac-K4D2"])
def test_trace_invariants(tm, kw):
    for seed in range(3):
        t = run(tm, None, seed=seed, **kw)
        t.check()
        n = tm.grid[0] * tm.grid[1]
        assert sorted(e.pos for s in t.steps for e in s.events if e.decision in COMMITTING) == list(range(n))
        for s in t.steps[1:]:
            check_decisions(s.events)
            assert s.drafted and all(r.token >= 0 for r in s.drafted)
        if kw["method"] != "csd":
            assert max(e.tv_cost for s in t.steps for e in s.events) < 1e-5
        assert Trace.from_json(json.loads(json.dumps(t.to_json()))) == t


def redraft_stability(trace) -> float:
    """Of the positions drafted in two consecutive steps (and not committed between), the share whose draft token
    stayed the same: coupling's whole point (1 - TV(p, p') per slot instead of sum p p')."""
    same = total = 0
    for a, b in zip(trace.steps[1:], trace.steps[2:]):
        before = {r.pos: r.token for r in a.drafted}
        for r in b.drafted:
            if r.pos in before:
                same += before[r.pos] == r.token
                total += 1
    return same / max(1, total)


def test_coupling_changes_only_when_on(tm):
    """couple=0 is SJD bit for bit; couple=1 (mcsjd) redrafts the same token far more often on the same seeds."""
    a = [run(tm, None, method="sjd", seed=s, window=6) for s in range(4)]
    b = [run(tm, None, method="sjd", seed=s, window=6, couple=0) for s in range(4)]
    c = [run(tm, None, method="mcsjd", seed=s, window=6) for s in range(4)]
    assert [t.tokens for t in a] == [t.tokens for t in b]
    assert np.mean([redraft_stability(t) for t in c]) > np.mean([redraft_stability(t) for t in a]) + 0.03


def test_pac_tree_layout():
    """The released layout: K-ary levels 1..D-1 (the same K tokens under every parent), a chain on the first
    candidates out to the node budget; the main path is the first candidates."""
    levels = [([1, 2, 3], [None] * 3), ([4, 5, 6], [None] * 3), ([7], [None]), ([8], [None])]
    tree, main = pac.build_tree(0, levels)
    assert len(tree.tokens) == 1 + 3 + 9 + 2 == pac.tree_nodes(3, 3) + 2
    assert [tree.tokens[i] for i in main] == [0, 1, 4, 7, 8]
    assert pac.path_length(15, 3, 3) == len(main)
    assert all(tree.depths[i] == d for d, i in enumerate(main))


def test_pac_window_too_small_is_refused():
    from specviz.core.knobs import ConfigError
    from specviz.engine.config import RunConfig
    with pytest.raises(ConfigError, match="window"):
        RunConfig(method="sjdpac", window=8)


def test_mutants_are_killed():
    """Until tests/mutation/test_mutation.py runs them: each variant makes at least one of its detectors fail."""
    from tests.mutation.mutants_jacobi import VARIANTS
    for m in VARIANTS:
        for d in m.detectors:
            d()                                          # the detectors pass on the real code
        with pytest.MonkeyPatch.context() as mp:
            m.apply(mp)
            failed = 0
            for d in m.detectors:
                try:
                    d()
                except AssertionError:
                    failed += 1
            assert failed, f"mutant {m.name} survived"


def test_views_replay_and_preview_read_the_new_methods():
    """The heatmaps, step replay and instant preview read mcsjd / sjdpac / csd+couple traces like any other."""
    from specviz.analysis import views
    from specviz.analysis.preview import rescore
    from specviz.app.configs import make_configs
    from specviz.app.race import race
    from specviz.engine.registry import KnobValues
    model = tiny(codes=8, grid=4, seed=1)
    cfgs = make_configs(["mcsjd", "sjdpac", "csd"], prompt="red house", seed=2, window=14, couple=1)
    traces = list(race(model, None, cfgs, fps=1e9))[-1].traces
    for name, t in traces.items():
        for kind in ("entropy", "finalize", "tv_cost"):
            assert np.isfinite(views.numeric_map(t, kind)).all()
        idx, rejected = views.decision_map(t)
        assert rejected.any() == any(e.decision == "rejected" for s in t.steps for e in s.events)
        total = 0
        for s in range(len(t.steps)):
            v = views.step_view(t, s)
            assert v.committed_before == total
            total = v.committed_after
        assert total == 16
        pv = rescore(t, KnobValues.from_config(t.config))
        assert pv.tunable == (name == "csd")
        judged = np.isfinite(pv.accept)
        assert np.allclose(pv.accept[judged], pv.recorded[judged], atol=1e-5)


def test_mcsjd_config_and_trace_record_the_coupling_it_runs():
    """mcsjd forces couple=1 (Method.forces): the config, hence every trace, records what runs."""
    from specviz.engine.config import RunConfig
    assert RunConfig(method="mcsjd").couple == 1 and RunConfig(method="mcsjd", couple=0).couple == 1
    assert RunConfig(method="sjd").couple == 0
    tm = tiny(codes=6, grid=3, seed=0)
    assert run(tm, None, method="mcsjd", seed=0, window=4).config["couple"] == 1


def test_sjdpac_records_the_fresh_draft_init_it_runs():
    """sjdpac drafts fresh slots uniformly whatever --init says: the config, hence the trace, records init=random."""
    from specviz.engine.config import RunConfig
    assert RunConfig(method="sjdpac", init="repeat_vertical").init == "random"
    assert RunConfig(method="sjd", init="repeat_vertical").init == "repeat_vertical"
