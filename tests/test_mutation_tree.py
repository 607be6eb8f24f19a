"""The tree side's mutation check (a minimal local harness for tests/mutants_tree.py; tests/test_mutation.py runs
every tests/mutants_*.py the same way): each variant, applied by monkeypatching, makes at least one detector fail."""
import pytest

from tests.mutants_tree import VARIANTS


@pytest.mark.parametrize("mutant", VARIANTS, ids=[m.name for m in VARIANTS])
def test_variant_is_killed(mutant, monkeypatch):
    with monkeypatch.context() as mp:
        mutant.apply(mp)
        failed = []
        for det in mutant.detectors:
            try:
                det()
            except AssertionError:
                failed.append(det.__name__)
    assert failed, f"survived: {mutant.name}"


def test_detectors_pass_on_the_real_code():
    for det in {d for m in VARIANTS for d in m.detectors}:
        det()
