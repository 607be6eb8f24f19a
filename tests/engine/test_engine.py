"""Engine invariants on a tiny random target: greedy equality, bit-for-bit reductions, bounds, trace contract."""
import json

import pytest
import torch

from specviz.core.knobs import ConfigError
from specviz.core.records import COMMITTING
from specviz.core.trace import Trace
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode
from tests.support.toy import CountingModel, check_decisions, grp, run, toy


@pytest.fixture(scope="module")
def tm():
    return toy(codes=16, grid=5, seed=2)


LOSSLESS = [dict(method="sjd", window=6), dict(method="sjd", window=4, init="repeat_vertical"),
            dict(method="sd", tree="dynamic"), dict(method="sd", tree="static"), dict(method="sd", tree="chain"),
            dict(method="cascade", tau_pos=1.5, tau_seq=1.5),
            dict(method="csd", lam=0.0), dict(method="lantern", lantern_delta=0.0)]


@pytest.mark.parametrize("kw", LOSSLESS, ids=lambda k: "-".join(str(v) for v in k.values()))
def test_greedy_equals_ar(tm, kw):
    model, fac = tm
    ar = run(model, fac, method="ar", temperature=0.0).tokens
    assert run(model, fac, temperature=0.0, **kw).tokens == ar


def _decisions(t):
    return [(e.pos, e.token, e.decision, e.u) for s in t.steps for e in s.events]


@pytest.mark.parametrize("zero", [dict(lam=0.0), dict(delta=0.0)])
def test_csd_reduces_to_sjd_bit_for_bit(tm, zero):
    model, fac = tm
    for seed in range(3):
        a = run(model, fac, method="sjd", seed=seed, window=5)
        b = run(model, fac, method="csd", seed=seed, window=5, **({"lam": 0.3, "delta": 0.9} | zero))
        assert a.tokens == b.tokens and _decisions(a) == _decisions(b)


def test_cascade_reduces_to_sd_bit_for_bit(tm):
    model, fac = tm
    for seed in range(3):
        a = run(model, fac, method="sd", seed=seed)
        b = run(model, fac, method="cascade", seed=seed, tau_pos=1.01, tau_seq=1.01)
        assert a.tokens == b.tokens and _decisions(a) == _decisions(b)


def test_same_seed_same_tokens(tm):
    model, fac = tm
    for m in ("ar", "sjd", "sd"):
        assert run(model, fac, method=m, seed=7).tokens == run(model, fac, method=m, seed=7).tokens
    assert run(model, fac, method="ar", seed=1).tokens != run(model, fac, method="ar", seed=2).tokens


def test_csd_cost_bound_on_traces(tm):
    model, fac = tm
    for lam, delta in ((0.2, 0.9), (0.5, 0.3)):
        for seed in range(3):
            t = run(model, fac, method="csd", seed=seed, lam=lam, delta=delta, window=6)
            evs = [e for s in t.steps for e in s.events if e.decision in ("exact", "relaxed", "rejected")]
            assert evs
            for e in evs:
                assert e.tv_cost <= min(delta, lam * e.entropy_norm) + 1e-5


def test_cascade_budget_and_lantern_delta(tm):
    model, fac = tm
    for seed in range(4):
        for sets in ("paper", "siblings"):
            t = run(model, fac, method="cascade", seed=seed, tau_pos=0.0, tau_seq=0.0, cascade_budget=0.3,
                    cascade_sets=sets)
            for s in t.steps:                                       # Σ over judged levels of the level's TV <= δ
                level = {e.level: e for e in s.events if e.decision in ("exact", "relaxed", "rejected")}
                spent = 0.0
                for lvl in sorted(level):
                    assert abs(grp(level[lvl]).budget_left - max(0.0, 0.3 - spent)) < 1e-6
                    spent += level[lvl].tv_cost
                assert spent <= 0.3 + 1e-6
            assert t.summary["relaxed"] > 0 or seed                 # the relaxation does act
        t = run(model, fac, method="lantern", seed=seed, lantern_delta=0.05, lantern_k=4)
        for s in t.steps:
            for e in s.events:
                if e.point_mass and e.decision in ("exact", "relaxed", "rejected"):
                    assert e.moved <= 0.05 + 1e-6                   # a draft borrows at most delta


@pytest.mark.parametrize("method", ["ar", "sjd", "csd", "gsd", "sd", "cascade", "lantern"])
def test_trace_invariants(tm, method):
    model, fac = tm
    cm = CountingModel(model)
    cfg = RunConfig(method=method, prompt="red house", seed=3, lam=0.3, delta=0.8, tau_pos=0.5, tau_seq=0.5,
                    window=5, tree_depth=3)
    *_, last = decode(cm, cfg, fac)
    t = last.trace
    n = model.grid[0] * model.grid[1]
    commits = [e.pos for s in t.steps for e in s.events if e.decision in COMMITTING]
    assert sorted(commits) == list(range(n))                        # each position committed exactly once
    assert len(t.steps) == cm.calls == t.summary["target_forwards"]  # forwards counted once
    assert [e.token for _, (_, e) in sorted(t.committing().items())] == t.tokens
    cap = cfg.window if method in ("sjd", "csd", "gsd") else cfg.tree_depth + 1
    for s in t.steps[1:]:
        k = sum(e.decision in COMMITTING for e in s.events)
        assert 1 <= k <= cap
        check_decisions(s.events)
    if method in ("ar", "sjd", "sd"):                               # lossless: output law is exactly q
        assert max(e.tv_cost for s in t.steps for e in s.events) < 1e-5
    back = Trace.from_json(json.loads(json.dumps(t.to_json())))
    assert back == t                                                # lossless JSON round trip
    assert t.to_grid("finalize").shape == tuple(model.grid)


def test_bad_config_messages():
    with pytest.raises(ConfigError, match="temperature"):
        RunConfig(temperature=-1)
    with pytest.raises(ConfigError, match="method"):
        RunConfig(method="nope")
    with pytest.raises(ConfigError, match="finite"):
        RunConfig(lam=float("nan"))
    with pytest.raises(ConfigError, match="prompt"):
        RunConfig(prompt="  ")


def test_cfg_scale_one_is_conditional():
    from specviz.models.scenes import tiny
    m = tiny(codes=8, grid=3)
    cap = torch.tensor([[0, 5, 10, 16, 23]])
    codes = torch.randint(0, 8, (1, 9))
    full, _ = m.target(cap, codes)
    pf = m.prefill(cap[0].tolist(), 1.0)
    assert torch.allclose(pf.logits, full[0, 0], atol=1e-5)
    pf3 = m.prefill(cap[0].tolist(), 3.0)
    assert not torch.allclose(pf3.logits, full[0, 0], atol=1e-3)


@pytest.mark.parametrize("kw", [dict(tree="chain"), dict(tree="static"), dict(tree="static", tree_sampling="sample")])
def test_draft_model_drafter(tm, kw):
    """A second small AR model drafts for sd and cascade: greedy equals AR; sampling keeps the trace invariants."""
    from specviz.engine.drafters.model import ModelDrafter
    from specviz.engine.drafters.protocols import DrafterFactory  # test-local: the drafter factory record
    from specviz.models.scenes import tiny
    model, _ = tm
    draft = tiny(codes=16, grid=5, seed=9)
    fac = DrafterFactory(lambda m, cfg, gen: ModelDrafter(draft, cfg, gen), "draft model")
    ar = run(model, fac, method="ar", temperature=0.0).tokens
    assert run(model, fac, method="sd", temperature=0.0, **kw).tokens == ar
    assert run(model, fac, method="cascade", temperature=0.0, tau_pos=1.1, tau_seq=1.1, **kw).tokens == ar
    t = run(model, fac, method="cascade", seed=1, tau_pos=0.3, tau_seq=0.3, **kw)
    assert sorted(e.pos for s in t.steps for e in s.events if e.commits) == list(range(25))


@pytest.mark.parametrize("bad", ['{"method": "ar"}', "[1, 2]", "not json", '{"method": "ar", "model": "m", '
                                 '"grid": [2, 2], "config": {}, "tokens": [], "steps": [{"step": 0}]}'])
def test_broken_trace_files_give_a_clear_error(tmp_path, bad):
    p = tmp_path / "t.json"
    p.write_text(bad)
    with pytest.raises(ValueError, match="not a specviz trace"):
        Trace.load(p)
