"""Wrong variants of the mutation check's own shortcut (tests/mutation/test_mutation.collected: a detector that is a
test of the default run is not run again by test_detectors_pass_on_the_real_code); protocol: tests/support/mutants.py.
Each would let a detector the default run never calls as it is go unchecked on the real code."""
from __future__ import annotations

import types

from tests.mutation import test_mutation as tm
from tests.support.mutants import Mutant

_DETECT = (tm.test_a_detector_that_is_a_collected_test_is_recognised,)

VARIANTS = [
    Mutant("collected: a test's marks are not read (an extended or skipped test counted as run by default)",
           lambda mp: mp.setattr(tm, "DEFAULT_MARKS", tm.DEFAULT_MARKS | {"extended", "skip", "skipif", "xfail",
                                                                          "parametrize", "usefixtures"}), _DETECT),
    Mutant("collected: a test's parameters are not read (a test with fixtures or cases counted as called bare)",
           lambda mp: mp.setattr(tm, "inspect", types.SimpleNamespace(
               signature=lambda f: types.SimpleNamespace(parameters={}))), _DETECT),
]
