"""Mutation-check variants for the tree walks' reads per step (protocol: tests/support/mutants.py): a value read on
the host inside a level's walk must show in tests/engine/test_host_syncs.py."""
from __future__ import annotations

from specviz.engine import keyed, verify
from tests.engine.test_host_syncs import test_tree_walks_read_once_per_level, tree_reads_within_ceiling
from tests.support.mutants import Mutant


def _judge_one_reading(real):
    """Wrong: a sibling's judgement reads its acceptance on the host (a planted .item(), e.g. to log it)."""
    def judge_one(r, p, a, pa, x):
        out = real(r, p, a, pa, x)
        out[0].item()
        return out
    return judge_one


def _keyed_level_reading(real):
    """Wrong: a keyed level reads its cost on the host (a planted float())."""
    def level(q, laws, xs, accept_rows):
        lvl = real(q, laws, xs, accept_rows)
        float(lvl.cost)
        return lvl
    return level


VARIANTS = [
    Mutant("a tree level reads a sibling's acceptance on the host (planted .item(), papers' noise)",
           lambda mp: mp.setattr(verify, "_judge_one", _judge_one_reading(verify._judge_one)),
           (tree_reads_within_ceiling, test_tree_walks_read_once_per_level)),
    Mutant("a keyed tree level reads its cost on the host (planted float())",
           lambda mp: mp.setattr(keyed, "_level", _keyed_level_reading(keyed._level)),
           (tree_reads_within_ceiling, test_tree_walks_read_once_per_level)),
]
