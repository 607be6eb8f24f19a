"""Plausible wrong variants of the point-mass levels (engine/pointlevel.py, verify.point_tensors, keyed's cells),
each with the tests of tests/engine/test_point_levels.py that must catch it (protocol: tests/support/mutants.py).
Every variant wraps the real function, so it stays what the code would be with one line wrong."""
from __future__ import annotations

import torch

from specviz.core import sampling
from specviz.core.sampling import relax_excess
from specviz.engine import keyed, treewalk, verify
from tests.engine import test_point_levels as T
from tests.support.mutants import Mutant

_level_cost = keyed.level_cost


def _cell_kept(r, rx, a, x):
    """Wrong: a point-mass sibling's residual keeps its own cell (r(x) not reduced by a(x))."""
    f = r.clone()
    mass = f.sum()
    return torch.where(mass < verify._EPS, r, f / mass)


def _cost_as_bound(q, laws, xs, a):
    """Wrong: a keyed level of point masses charged the general bound 1 - Π (1 - c_j), the miss factor left out."""
    if a.dim() == 1:
        xt = torch.tensor(xs, device=q.device)
        return 1.0 - torch.prod(1 - relax_excess(a, sampling.exact_at(torch.ones_like(a), q[xt])))
    return _level_cost(q, laws, xs, a)


VARIANTS = [
    Mutant("point level: a sibling's residual keeps its own cell",
           lambda mp: mp.setattr(verify, "_point_residual", _cell_kept),
           (T.test_point_level_equals_the_row_wise_level_bit_for_bit,
            T.test_point_walks_equal_the_walks_over_one_hot_rows)),
    Mutant("point level: every sibling's TV(p, r) taken against the level's q",
           lambda mp: mp.setattr(treewalk, "point_tvs_each", lambda targets, xs, lx=None: treewalk.point_tvs(
               targets[0], torch.stack([targets[0][x] for x in xs]))),
           (T.test_point_walks_equal_the_walks_over_one_hot_rows,)),
    Mutant("keyed point level: cost without the miss factor (1 - Σ_K q)",
           lambda mp: mp.setattr(keyed, "level_cost", _cost_as_bound),
           (T.test_keyed_point_level_equals_the_row_wise_level_bit_for_bit,)),
]
