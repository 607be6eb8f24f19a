"""Wrong variants of the re-run's predicted-vs-achieved table (specviz/analysis/preview.py outcomes)."""
import dataclasses
from functools import lru_cache

from specviz.analysis import preview
from specviz.app import handlers
from specviz.engine import registry
from tests.analysis import test_rerun_outcome as runs
from tests.analysis.test_rerun_outcome import rerun_table_states_prediction_and_result as table
from tests.support.mutants import Mutant

_OUTCOMES = preview.outcomes


def _at_recorded_knobs(before, after, moved):
    """the prediction taken at the recorded knobs (the preview's left-hand estimate), not at the new ones."""
    out = []
    for o in _OUTCOMES(before, after, moved):
        pv = preview.rescore(before[o.method], registry.KnobValues.from_config(before[o.method].config))
        out.append(dataclasses.replace(o, predicted=pv.baseline_compression))
    return out


def _achieved_is_before(before, after, moved):
    """'achieved' read from the previous run instead of the re-run."""
    return [dataclasses.replace(o, achieved=o.before) for o in _OUTCOMES(before, after, moved)]


def _fresh(fn):
    """Install `fn`, with a cache of its own for the detector's two runs (undone with the variant)."""
    def apply(mp):
        mp.setattr(handlers, "outcomes", fn)
        mp.setattr(runs, "two_runs", lru_cache(maxsize=1)(runs.two_runs.__wrapped__))
    return apply


VARIANTS = [
    Mutant("re-run table: prediction at the recorded knobs", _fresh(_at_recorded_knobs), (table,)),
    Mutant("re-run table: achieved read from the previous run", _fresh(_achieved_is_before), (table,)),
]
