"""Mutation-check variants for the engine's device residency (tests/engine/test_device_residency.py, protocol:
tests/support/mutants.py): each puts back one host tensor the check found beside the model's laws."""
from __future__ import annotations

import torch

from specviz.engine import codebook, keyed, methods, rules, treewalk, verify
from tests.engine.test_device_residency import gsd_stays_on_device, lantern_stays_on_device, tree_kids_stay_on_device
from tests.support.mutants import Mutant


def _kid_laws_on_the_host(real):
    """Wrong: the kids' point masses made on the host whatever device the laws are on."""
    def kid_laws(tree, kids, vocab, device=None):
        return real(tree, kids, vocab)
    return kid_laws


def _neighbours_left_on_the_host(real):
    """Wrong: LANTERN's neighbour table handed to the rule where it was computed (the host)."""
    def table(model, k):
        t = real(model, k)
        return _Pinned(t)
    return table


class _Pinned(torch.Tensor):
    """A tensor whose .to() stays where it is (a move forgotten)."""

    def to(self, *a, **kw):
        return self.as_subclass(torch.Tensor)


def _gsd_ranks_on_the_host(real):
    """Wrong: GSD's per-cell ranks scattered from a host arange (its device argument forgotten)."""
    arange = torch.arange

    def gsd(*a, **kw):
        def host_arange(*aa, **kk):
            kk.pop("device", None)
            return arange(*aa, **kk)
        rules.torch.arange = host_arange
        try:
            return real(*a, **kw)
        finally:
            rules.torch.arange = arange
    return gsd


VARIANTS = [
    Mutant("the tree kids' point-mass laws made on the host",
           lambda mp: [mp.setattr(m, "kid_laws", _kid_laws_on_the_host(verify.kid_laws)) for m in (verify, treewalk,
                                                                                                      keyed)],
           (tree_kids_stay_on_device,)),
    Mutant("LANTERN's neighbour table left on the host",
           lambda mp: mp.setattr(methods, "neighbour_table", _neighbours_left_on_the_host(codebook.neighbour_table)),
           (lantern_stays_on_device,)),
    Mutant("GSD's per-cell ranks and windows made on the host",
           lambda mp: mp.setattr(rules, "gsd", _gsd_ranks_on_the_host(rules.gsd)),
           (gsd_stays_on_device,)),
]
