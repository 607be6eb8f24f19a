"""The mutation check (docs/methods.md §8.4): every plausible wrong variant in tests/mutation/mutants_*.py must make
at least
one of its detectors fail. `python -m tests.mutation.test_mutation` prints the report; the test fails naming any
survivor."""
from __future__ import annotations

import importlib
import time
from pathlib import Path

import pytest

MODULES = sorted(p.stem for p in Path(__file__).parent.glob("mutants_*.py"))


def variants() -> list:
    return [(m, v) for m in MODULES for v in importlib.import_module(f"tests.mutation.{m}").VARIANTS]


def _name(d) -> str:
    return getattr(d, "__name__", repr(d))


def killers(v) -> list[str]:
    """The detectors that fail (an assertion, or pytest.raises not raising) with the variant installed. A crash is
    not a kill: a variant must be a plausible rule that runs."""
    mp = pytest.MonkeyPatch()
    hits = []
    try:
        v.apply(mp)
        for d in v.detectors:
            try:
                d()
            except (AssertionError, pytest.fail.Exception) as e:
                hits.append(f"{_name(d)}: {type(e).__name__}")
    finally:
        mp.undo()
    return hits


def report() -> list[tuple[str, str, list[str]]]:
    rows = []
    for module, v in variants():
        rows.append((module, v.name, killers(v)))
    return rows


@pytest.mark.slow
def test_detectors_pass_on_the_real_code():
    seen = set()
    for _, v in variants():
        for d in v.detectors:
            if id(d) not in seen:
                seen.add(id(d))
                d()


def test_the_check_has_its_variants():
    assert len(variants()) >= 8 and all(importlib.import_module(f"tests.mutation.{m}").VARIANTS for m in MODULES)


@pytest.mark.parametrize("module", MODULES)              # one test per module: the workers share the check
def test_every_variant_is_killed(module):
    rows = [(module, v.name, killers(v)) for v in importlib.import_module(f"tests.mutation.{module}").VARIANTS]
    # the report (pytest -s, or python -m tests.mutation.test_mutation)
    for _, name, hits in rows:
        print(f"{'KILLED' if hits else 'SURVIVES'} [{module}] {name}: {'; '.join(hits)}")
    survivors = [f"{module}: {name}" for _, name, hits in rows if not hits]
    assert not survivors, f"variants no test catches (write a test): {survivors}"


if __name__ == "__main__":
    t0 = time.time()
    for module, name, hits in report():
        print(f"{'KILLED ' if hits else 'SURVIVES'} [{module}] {name}" + (f"  <- {hits[0]}" if hits else ""))
    print(f"{time.time() - t0:.1f} s")
