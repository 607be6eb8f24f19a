"""The Jacobi family's keyed chain asks the method's record whether its rule is lossless (engine/keyed.keyed_chain's
`lossless`): a relaxed rule (CSD) still draws its keyed uniforms, relaxes slots and records their cost, and a
lossless one (SJD) records u = -1 and cost 0, on the stub target (engine/stub.py)."""
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from specviz.engine.stub import StubTarget, stub_factory


def judged(method: str, **kw) -> list:
    cfg = RunConfig(method=method, prompt="stub", noise="keyed", **kw)
    trace = drain(decode(StubTarget(64, (6, 6), sharpness=1.0), cfg, stub_factory)).trace
    return [e for s in trace.steps for e in s.events if e.decision in ("exact", "relaxed", "rejected")]


def check_relaxed_rule_relaxes_under_keyed_noise() -> None:
    ev = judged("csd", lam=1.0, delta=1.0)
    relaxed = [e for e in ev if e.decision == "relaxed"]
    assert relaxed and all(0 <= e.u < 1 and e.tv_cost > 0 for e in relaxed)
    assert any(e.u >= 0 for e in ev if e.decision == "rejected")      # a miss drew its uniform and lost


def test_relaxed_rule_relaxes_under_keyed_noise():
    check_relaxed_rule_relaxes_under_keyed_noise()


def test_lossless_rule_draws_no_relaxation_uniform():
    ev = judged("sjd")
    assert ev and all(e.u == -1.0 and e.tv_cost == 0.0 and e.decision != "relaxed" for e in ev)
