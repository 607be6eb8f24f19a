"""Wrong variants of the mutation check's second shortcut (tests/mutation/test_mutation.called_by_a_collected_test: a
helper detector a collected test calls first thing, bare, is not run again by test_detectors_pass_on_the_real_code);
protocol: tests/support/mutants.py. Each would count as checked on the real code a helper the default run may never
call as the check does."""
from __future__ import annotations

import ast

from tests.mutation import test_mutation as tm
from tests.support.mutants import Mutant

_DETECT = (tm.test_a_detector_a_collected_test_calls_first_is_recognised,)
_first_call = tm.first_call


def _any_statement(test):
    """Any bare call among the body's statements (one after a skip counts)."""
    import inspect  # noqa: PLC0415 - only this variant reads the source itself
    import textwrap  # noqa: PLC0415 - as above
    try:
        body = ast.parse(textwrap.dedent(inspect.getsource(test))).body[0].body
    except (OSError, TypeError, IndexError):
        return None
    names = [s.value.func.id for s in body if isinstance(s, (ast.Expr, ast.Assign)) and isinstance(s.value, ast.Call)
             and isinstance(s.value.func, ast.Name) and not s.value.args]
    return names[-1] if names else None


def _any_depth(test):
    """A call anywhere in the test, inside a block or with arguments too."""
    import inspect  # noqa: PLC0415 - only this variant reads the source itself
    import textwrap  # noqa: PLC0415 - as above
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(test)))
    except (OSError, TypeError):
        return None
    names = [n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    return names[-1] if names else None


VARIANTS = [
    Mutant("first call: a bare call after another statement counts (a skip before it: the helper never ran)",
           lambda mp: mp.setattr(tm, "first_call", _any_statement), _DETECT),
    Mutant("first call: a call inside a block or with arguments counts (not the call the check makes)",
           lambda mp: mp.setattr(tm, "first_call", _any_depth), _DETECT),
    Mutant("first call: the calling test's marks and parameters are not read (an extended test or one with fixtures "
           "counted as run by default)", lambda mp: mp.setattr(tm, "collected", lambda d: callable(d)), _DETECT),
]
