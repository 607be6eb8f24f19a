"""Wrong variants of the tuning bench's words (specviz/render/bench.py)."""
from specviz.engine import methods
from specviz.render import bench
from tests.app.test_app_bench import lane_headers_carry_the_knobs_of_their_run as headers
from tests.app.test_app_bench import outcome_line_states_before_predicted_achieved as outcome
from tests.support.mutants import Mutant

_LINE = bench.outcome_line


def _swapped(rows, cards):
    """predicted and achieved written the other way round."""
    return _LINE([type(o)(o.method, o.before, o.achieved, o.predicted) for o in rows], cards)


def _default_knobs(method, config, cards):
    """the lane header quoting the registry defaults instead of the run's config."""
    return [(s, k.default) for (s, _), k in zip(_VALUES(method, config, cards), _knobs(method))]


_VALUES = bench.knob_values


def _knobs(method):
    m = methods.REGISTRY[method]
    return [k for k in methods.all_knobs() if k.name in m.rule_knobs and k.kind is not str]


VARIANTS = [
    Mutant("bench: predicted and achieved swapped", lambda mp: mp.setattr(bench, "outcome_line", _swapped),
           (outcome,)),
    Mutant("bench: lane headers show the defaults", lambda mp: mp.setattr(bench, "knob_values", _default_knobs),
           (headers,)),
]
