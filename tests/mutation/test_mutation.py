"""The mutation check (docs/methods.md §8.4): every plausible wrong variant in tests/mutation/mutants_*.py must make
at least
one of its detectors fail. `python -m tests.mutation.test_mutation` prints the report; the test fails naming any
survivor."""
from __future__ import annotations

import ast
import importlib
import inspect
import sys
import textwrap
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


DEFAULT_MARKS = {"slow", "browser"}                      # marks the default run (pyproject addopts) still runs


def collected(d) -> bool:
    """Whether detector `d` is itself a test the default run collects and calls exactly as the check does: a
    function test_* of a tests module test_*.py, found there under its name, with no parameters (so no fixtures and
    no cases) and no mark beyond slow and browser (none of extended, parametrize, skip, skipif, xfail, usefixtures),
    its module none either. Its pass on the real code is then that test's own verdict in the same run."""
    mod = sys.modules.get(getattr(d, "__module__", ""))
    name = getattr(d, "__name__", "")
    if mod is None or not name.startswith("test_") or getattr(mod, name, None) is not d:
        return False
    path = Path(getattr(mod, "__file__", "") or "")
    tests = Path(__file__).resolve().parents[1]
    if not path.name.startswith("test_") or tests not in path.resolve().parents:
        return False
    marks = [*getattr(d, "pytestmark", []), *getattr(mod, "pytestmark", [])]
    marks = marks if isinstance(marks, list) else [marks]
    return not inspect.signature(d).parameters and {m.name for m in marks} <= DEFAULT_MARKS


@pytest.mark.slow
def test_detectors_pass_on_the_real_code():
    """Every detector passes with no variant installed (else a kill proves nothing). A detector that is itself a test
    of the default run (`collected`) is that test's verdict in the same run, not run twice; `python -m
    tests.mutation.test_mutation --all` runs them all here."""
    for d in detectors(everything=False):
        d()


def detectors(everything: bool) -> list:
    """The distinct detectors of every variant; without `everything`, those the default run does not run itself."""
    seen, out = set(), []
    for _, v in variants():
        for d in v.detectors:
            if id(d) not in seen:
                seen.add(id(d))
                if everything or not (collected(d) or called_by_a_collected_test(d)):
                    out.append(d)
    return out


def first_call(test) -> str | None:
    """The name `test` calls first thing, with no arguments, as a whole statement of its body (`h()` or `x = h()`,
    its docstring before it, nothing else): it runs whenever the test runs, and its failure is the test's failure."""
    try:
        body = ast.parse(textwrap.dedent(inspect.getsource(test))).body[0].body
    except (OSError, TypeError, IndexError, AttributeError, SyntaxError):   # no source (a built function): none known
        return None
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and len(body) > 1:
        body = body[1:]                                                     # the docstring
    s = body[0] if body else None
    if isinstance(s, (ast.Expr, ast.Assign)) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name) \
            and not s.value.args and not s.value.keywords:
        return s.value.func.id
    return None


def called_by_a_collected_test(d) -> bool:
    """Whether a test of d's own module that the default run collects (`collected`) calls d first (`first_call`),
    finding d under that name: that test's pass is d's pass on the real code in the same run (test_plain.py's
    plain_says_the_recorded_event, say, is the first statement of the test under it)."""
    mod, name = sys.modules.get(getattr(d, "__module__", "")), getattr(d, "__name__", "")
    if mod is None or getattr(mod, name, None) is not d:
        return False
    return any(callable(t) and collected(t) and t.__globals__.get(name) is d and first_call(t) == name
               for k, t in vars(mod).items() if k.startswith("test_"))


def test_a_detector_that_is_a_collected_test_is_recognised():
    """`collected` tells a test of the default run from a helper, a test with fixtures or cases, one the default run
    leaves out (extended, skipped) and a function outside a tests module."""
    import types  # noqa: PLC0415 - only this test makes a module

    from tests.mutation import mutants_keyed  # noqa: PLC0415 - a module of detectors that are plain tests
    from tests.project import test_cases as tc  # noqa: PLC0415 - a module with tests of several kinds
    plain = {d for v in mutants_keyed.VARIANTS for d in v.detectors if d.__name__.startswith("test_")}
    assert plain and all(collected(d) for d in plain)
    assert collected(tc.test_one_keeps_one_screen)                             # no marks, no parameters
    assert collected(tc.test_the_default_run_keeps_every_test_and_extended_the_rest)   # slow: still run by default
    assert not collected(tc.collect) and not collected(killers) and not collected(lambda: None)   # not tests

    mod = types.ModuleType("tests.fake.test_fake")
    mod.__file__ = str(Path(__file__).resolve().parents[1] / "fake" / "test_fake.py")
    with pytest.MonkeyPatch.context() as mp:                   # no fixture: the test is also a mutant's detector
        mp.setitem(sys.modules, mod.__name__, mod)
        _fake_module_cases(mod)


def _fake_module_cases(mod) -> None:
    import types  # noqa: PLC0415 - only these cases make functions

    def test_plain():
        pass

    def test_fixture(tmp_path):
        pass
    kinds = {"plain": (test_plain, None), "fixture": (test_fixture, None),
             "extended": (test_plain, pytest.mark.extended), "slow": (test_plain, pytest.mark.slow),
             "skipif": (test_plain, pytest.mark.skipif(True, reason="x"))}
    got = {}
    for kind, (f, mark) in kinds.items():
        g = types.FunctionType(f.__code__, f.__globals__, "test_" + kind)      # a fresh function, its own marks
        g.__module__ = mod.__name__
        g = mark(g) if mark else g
        setattr(mod, g.__name__, g)
        got[kind] = collected(g)
    assert got == {"plain": True, "fixture": False, "extended": False, "skipif": False, "slow": True}
    assert not collected(types.FunctionType(test_plain.__code__, {}, "test_elsewhere"))   # not in its module
    mod.pytestmark = [pytest.mark.skip(reason="x")]                            # the module's marks count too
    assert not collected(mod.test_plain)
    mod.__file__ = "/elsewhere/test_fake.py"
    del mod.pytestmark
    assert not collected(mod.test_plain)                                       # a test_*.py outside tests/


def _helper():
    assert True


def _first(): _helper()                                 # noqa: E704 - each case's source is one line


def _assigned():
    """A docstring."""
    x = _helper()                                       # noqa: F841 - the call is the case
    return x


def _after_a_skip():
    pytest.skip("x")
    _helper()


def _with_arguments(): _helper(*())                     # noqa: E704


def _nested():
    if True:
        _helper()


def _with_a_fixture(tmp_path): _helper()                # noqa: E704


def test_a_detector_a_collected_test_calls_first_is_recognised():
    """`called_by_a_collected_test` counts a helper as run by the default run only when a collected test of its module
    calls it first thing, bare: not after a statement that may skip, not with arguments, not inside a block, not from
    a test with fixtures or one the default run leaves out."""
    import types  # noqa: PLC0415 - only this test makes modules

    def case(test, mark=None) -> bool:
        mod = types.ModuleType(f"tests.fake.test_fake_{test.__name__.strip('_')}")
        mod.__file__ = str(Path(__file__).resolve().parents[1] / "fake" / f"{mod.__name__.split('.')[-1]}.py")
        helper = types.FunctionType(_helper.__code__, mod.__dict__, "_helper")
        helper.__module__ = mod.__name__
        t = types.FunctionType(test.__code__, mod.__dict__, "test_" + test.__name__.strip("_"))
        t.__module__ = mod.__name__
        mod._helper, mod.pytest = helper, pytest
        setattr(mod, t.__name__, mark(t) if mark else t)
        with pytest.MonkeyPatch.context() as mp:
            mp.setitem(sys.modules, mod.__name__, mod)
            return called_by_a_collected_test(helper)
    got = {f.__name__: case(f) for f in (_first, _assigned, _after_a_skip, _with_arguments, _nested, _with_a_fixture)}
    assert got == {"_first": True, "_assigned": True, "_after_a_skip": False, "_with_arguments": False,
                   "_nested": False, "_with_a_fixture": False}
    assert not case(_first, pytest.mark.extended) and case(_first, pytest.mark.slow)
    assert not called_by_a_collected_test(_helper)       # this module's tests never call it first
    from tests.render import test_plain  # noqa: PLC0415 - a real helper the default run calls first thing
    assert called_by_a_collected_test(test_plain.plain_says_the_recorded_event)


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
    if "--all" in sys.argv:                                 # every detector on the real code, collected tests too
        for d in detectors(everything=True):
            d()
        print(f"every detector passes on the real code: {time.time() - t0:.1f} s")
    for module, name, hits in report():
        print(f"{'KILLED ' if hits else 'SURVIVES'} [{module}] {name}" + (f"  <- {hits[0]}" if hits else ""))
    print(f"{time.time() - t0:.1f} s")
