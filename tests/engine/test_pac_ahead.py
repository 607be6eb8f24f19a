"""SJD-PAC's next candidates read with the walk (drafters/pac.LevelsAhead on DraftTree.rider, levelpack.Ahead): the
same runs as drawing them in the propose's own read (randomness.candidate_levels), token for token and record for
record, under both noises: walks that end at the root's level, deeper (rejections below the root, leaves accepted
with a bonus), levels whose law runs out of mass (top-k below the width), at the image's end, and two tree shapes.
The propose reads on its own only in the first step (no walk before it)."""
from types import SimpleNamespace

import pytest
import torch

from specviz.engine import families, randomness
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from specviz.engine.drafters import pac
from specviz.engine.registry import get
from specviz.engine.stub import StubTarget

CASES = (   # (stub rows, sharpness, top_k, pac_width, pac_depth, window): few rows and sharp laws walk deep
    (64, 3.0, 0, 3, 3, 16), (4, 3.0, 2, 3, 3, 16), (2, 6.0, 3, 3, 3, 16), (3, 4.0, 0, 2, 4, 18),
)


def _run(noise: str, case: tuple, seed: int, ahead: bool) -> tuple:
    """(trace JSON, proposes that read on their own, walk ends by kind and levels short of their width) of one SJD-PAC
    run on the 6x6 stub."""
    rows, sharp, top_k, width, depth, window = case
    own, ends, mp = [], {"root": 0, "below": 0, "leaf": 0, "short": 0}, pytest.MonkeyPatch()
    real_build = pac.build_tree

    def build(root, levels):                 # levels whose law ran out of mass before the width
        ends["short"] += sum(len(t) < (width if d < depth - 1 else 1) for d, (t, _) in enumerate(levels))
        return real_build(root, levels)
    mp.setattr(pac, "build_tree", build)
    real_levels, real_after = (randomness.Papers.candidate_levels, randomness.Keyed.candidate_levels), \
        pac.LevelsAhead.after

    def after(self, end):
        kids = self.tree.children[end]
        ends["leaf" if not kids else "root" if end == 0 else "below"] += 1
        return real_after(self, end)
    for cls, real in zip((randomness.Papers, randomness.Keyed), real_levels):
        mp.setattr(cls, "candidate_levels", lambda s, pos, *a, real=real: own.append(pos) or real(s, pos, *a))
    mp.setattr(pac.LevelsAhead, "after", after)
    if not ahead:
        mp.setattr(families.SJDPAC, "before_walk", lambda self, tree, q, n: None)
    try:
        cfg = RunConfig(method="sjdpac", prompt="stub", noise=noise, seed=seed, top_k=top_k, pac_width=width,
                        pac_depth=depth, window=window)
        prog = drain(decode(StubTarget(64, (6, 6), rows=rows, sharpness=sharp, seed=seed), cfg))
    finally:
        mp.undo()
    return _timeless(prog.trace.to_json()), own, ends


def _timeless(d):
    """A trace's JSON without its clock readings (the fields named *seconds)."""
    if isinstance(d, dict):
        return {k: _timeless(v) for k, v in d.items() if "seconds" not in k}
    return [_timeless(v) for v in d] if isinstance(d, list) else d


def pac_ahead_equals_own_reads():
    """The mutation check's detector (tests/mutation/mutants_pac_ahead.py): every case, both noises, two seeds."""
    for noise in ("papers", "keyed"):
        ends = {"root": 0, "below": 0, "leaf": 0, "short": 0}
        for case in CASES:
            for seed in (0, 1):
                got, own, seen = _run(noise, case, seed, ahead=True)
                want, _, _ = _run(noise, case, seed, ahead=False)
                assert got == want, (noise, case, seed)
                assert own == [1], (noise, case, seed, own)          # only the first step's propose reads
                ends = {k: ends[k] + seen[k] for k in ends}
        assert min(ends.values()) >= 5, (noise, ends)      # every kind of walk end is covered, and levels out of mass


def test_pac_ahead_equals_own_reads():
    pac_ahead_equals_own_reads()


def test_the_drafter_draws_where_the_model_lives():
    """SJD-PAC's uniform law (a position without a stale law) is made on the model's device, so its levels (levels_t:
    coupling with the carried laws, draws) run where the forward's laws are; before, it was always made on the CPU
    (a CUDA model's carried laws met a CPU uniform). A 'meta' model stands in for a GPU one."""
    cfg = RunConfig(method="sjdpac", prompt="stub")
    model = SimpleNamespace(codebook_size=64, device=torch.device("meta"))
    ctx = families.Ctx(model, cfg, get("sjdpac"), randomness.Papers(0, 64), None, 36, False)
    assert families.SJDPAC(ctx).drafter.uniform.device.type == "meta"
