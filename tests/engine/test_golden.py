"""Engine regression guard: traces of every method on fixed seeds equal the recorded golden ones.

Discrete fields (tokens, positions, decisions, levels, nodes, tree edges, sibling ids) must be equal exactly; float
fields (laws p and q, acceptance probabilities, u, entropy, TV, costs, cosines) must agree within
|got - want| <= ATOL + RTOL |want| with RTOL = ATOL = 1e-5. The engine computes in float32; another reduction order
(other SIMD kernels, another thread count) moves a field by up to 3e-6 absolute (measured here: 1 vs 2 threads over
all 10,745 recorded floats, worst an entropy of 0.626), so the tolerance has a 3x margin over that noise and still
fails any change of a rule (a law scaled by 1 + 1e-3, a flipped decision: see the comparator tests below). The
absolute part means a value below ~0.01 may move by up to 1e-5 unseen; a changed rule moves the larger values too.
The guard therefore holds on any CPU without hashing float bits.

`python -m tests.engine.test_golden` re-records tests/fixtures/golden_traces.json; do that only for an intended
behaviour change and
say so in the commit. The canonical form keeps the fields every trace version has (named or positional records are
normalised to the same lists), so a change of the JSON layout alone does not change it.
"""
import copy
import json
import math
from pathlib import Path

import pytest
import torch

from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from tests.support.toy import toy

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden_traces.json"
RTOL, ATOL = 1e-5, 1e-5

FIELDS = ("pos", "token", "decision", "level", "node", "p_draft", "p_target", "accept_prob", "exact_prob", "u",
          "entropy", "entropy_norm", "tv", "tv_cost", "point_mass", "moved", "similarity", "interchangeable",
          "convergent")
CASES = {   # name -> RunConfig overrides on the toy model (3x3 grid, 12 codes)
    "ar": dict(method="ar"),
    "sjd": dict(method="sjd", window=4),
    "csd": dict(method="csd", window=4, lam=0.5, delta=0.9),
    "gsd": dict(method="gsd", window=4, gsd_group=4, gsd_gap=0.3, gsd_dist=4.0),
    "gsd-released": dict(method="gsd", window=4, gsd_group=14, gsd_gap=0.3, gsd_dist=4.0, gsd_mode="released"),
    "sd": dict(method="sd", tree_depth=3, tree_topk=2, tree_nodes=6),
    "sd-static-sampled": dict(method="sd", tree="static", tree_depth=3, tree_topk=2, tree_sampling="sample"),
    "cascade": dict(method="cascade", tree_depth=3, tree_topk=3, tree_nodes=8, tau_pos=0.3, tau_seq=0.3,
                    cascade_budget=0.5),      # the budget default when recorded (now 1.0): pinned, same bits
    "cascade-siblings": dict(method="cascade", tree_depth=3, tree_topk=3, tree_nodes=8, tau_pos=0.3, tau_seq=0.3,
                             cascade_sets="siblings", cascade_budget=0.2),
    "sd-dynamic-sampled": dict(method="sd", tree_depth=3, tree_topk=3, tree_nodes=4, tree_sampling="sample"),
    "lantern": dict(method="lantern", tree_depth=3, tree_topk=2, tree_nodes=6, lantern_k=3, lantern_delta=0.3),
    "lanternpp": dict(method="lanternpp", tree="static", tree_depth=3, tree_topk=2, lantern_k=3, lanternpp_lambda=5.0),
}
SEEDS = (0, 1, 2)
LATER = ("tv_residual", "budget_left", "scale", "parent")   # event fields added after version 1, where present


def _sib(r):
    if not isinstance(r, dict):
        return list(r)
    later = [r[k] for k in ("level", "parent") if r.get(k, -1) != -1]
    return [r["node"], r["token"], r["q"], r["cos"], r["child_cos"]] + later


def _later(e: dict) -> list:
    return [[k, e[k]] for k in LATER if k in e]


def _drafted(r):
    return [r["node"], r["parent"], r["pos"], r["token"]] if isinstance(r, dict) else list(r)


def canonical(trace) -> dict:
    steps = []
    for st in trace.to_json()["steps"]:
        evs = [[e[k] for k in FIELDS] + [[_sib(r) for r in e.get("siblings", [])]] + _later(e) for e in st["events"]]
        steps.append([st["step"], [_drafted(r) for r in st.get("drafted", [])], evs])
    return {"tokens": trace.tokens, "steps": steps}


def mismatch(got, want, where: str = "") -> str | None:
    """Where `got` differs from `want` (None when equal): numbers that are both ints exactly, any float within
    RTOL/ATOL, everything else (str, bool, None, list shape) exactly."""
    if isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            return f"{where}: length {len(got)} != {len(want)}"
        return next((m for i, (g, w) in enumerate(zip(got, want)) if (m := mismatch(g, w, f"{where}[{i}]"))), None)
    if isinstance(want, dict) and isinstance(got, dict):
        if sorted(got) != sorted(want):
            return f"{where}: keys {sorted(got)} != {sorted(want)}"
        return next((m for k in want if (m := mismatch(got[k], want[k], f"{where}.{k}"))), None)
    numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in (got, want))
    if numbers and (isinstance(got, float) or isinstance(want, float)):
        return None if math.isclose(got, want, rel_tol=RTOL, abs_tol=ATOL) else f"{where}: {got!r} != {want!r}"
    return None if (type(got) is type(want) and got == want) else f"{where}: {got!r} != {want!r}"


def record() -> dict:
    model, factory = toy(codes=12, grid=3, seed=5)
    out = {}
    for name, kw in CASES.items():
        for seed in SEEDS:
            trace = drain(decode(model, RunConfig(prompt="red house", seed=seed, **kw), factory)).trace
            out[f"{name}/{seed}"] = canonical(trace)
    return out


@pytest.fixture(scope="module")
def golden() -> dict:
    if not GOLDEN.exists():
        pytest.skip("no golden traces recorded")
    return json.loads(GOLDEN.read_text())


def test_traces_equal_golden(golden):
    got = record()
    assert sorted(got) == sorted(golden)
    bad = {k: m for k in golden if (m := mismatch(got[k], golden[k], k))}
    assert not bad, f"traces changed: {bad}"


def _events(case: dict):
    return [ev for step in case["steps"] for ev in step[2]]


def _perturb(x, rel: float):
    if isinstance(x, list):
        return [_perturb(v, rel) for v in x]
    if isinstance(x, dict):
        return {k: _perturb(v, rel) for k, v in x.items()}
    return x * (1 + rel) if isinstance(x, float) else x


def test_another_cpus_float_noise_passes(golden):
    """Every float field moved by 1e-9 relative (more than two CPUs' kernels differ by) still matches."""
    noisy = _perturb(golden, 1e-9)
    assert sum(isinstance(v, float) for ev in _events(golden["cascade/0"]) for v in ev) > 0
    assert all(mismatch(noisy[k], golden[k]) is None for k in golden)


def test_a_flipped_decision_fails(golden):
    key = "csd/1"
    case = copy.deepcopy(golden[key])
    ev = next(ev for ev in _events(case) if ev[FIELDS.index("decision")] in ("exact", "relaxed"))
    ev[FIELDS.index("decision")] = "rejected"
    assert mismatch(case, golden[key]) is not None


def test_a_law_scaled_by_one_part_in_a_thousand_fails(golden):
    for key in ("sjd/1", "cascade/0"):
        case = copy.deepcopy(golden[key])
        ev = next(ev for ev in _events(case) if ev[FIELDS.index("p_target")] > 0.01)
        ev[FIELDS.index("p_target")] *= 1 + 1e-3
        assert mismatch(case, golden[key]) is not None


def test_a_changed_token_fails(golden):
    case = copy.deepcopy(golden["sd/0"])
    case["tokens"][4] = (case["tokens"][4] + 1) % 12
    assert mismatch(case, golden["sd/0"]) is not None


if __name__ == "__main__":
    torch.set_num_threads(1)        # as tests/conftest.py runs it (any count is within the tolerance)
    GOLDEN.write_text(json.dumps(record(), separators=(",", ":")))
    print(f"recorded {GOLDEN}")
