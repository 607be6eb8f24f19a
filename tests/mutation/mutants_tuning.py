"""Wrong variants of the tuning bench's words (specviz/render/knob_text.py), of the re-run's predictions
(analysis/preview.outcomes) and of the Summary tab's step compression (render/html.summary_rows)."""
from specviz.analysis import preview
from specviz.engine import registry
from specviz.render import html, knob_text
from tests.analysis.test_rerun_outcome import untuned_methods_are_predicted_at_their_previous_run as untuned
from tests.app.test_app_bench import lane_headers_carry_the_knobs_of_their_run as headers
from tests.app.test_app_bench import outcome_line_states_before_predicted_achieved as outcome
from tests.engine.test_summary import test_summary_and_history_show_the_same_step_compression as same_compression
from tests.support.mutants import Mutant

_LINE = knob_text.outcome_line


def _swapped(rows, cards):
    """predicted and achieved written the other way round."""
    return _LINE([type(o)(o.method, o.before, o.achieved, o.predicted) for o in rows], cards)


def _default_knobs(method, config, cards):
    """the lane header quoting the registry defaults instead of the run's config."""
    return [(s, k.default) for (s, _), k in zip(_VALUES(method, config, cards), _knobs(method))]


_VALUES = knob_text.knob_values


def _knobs(method):
    m = registry.REGISTRY[method]
    return [k for k in registry.all_knobs() if k.name in m.rule_knobs and k.kind is not str]


VARIANTS = [
    Mutant("knob_text: predicted and achieved swapped", lambda mp: mp.setattr(knob_text, "outcome_line", _swapped),
           (outcome,)),
    Mutant("knob_text: lane headers show the defaults", lambda mp: mp.setattr(knob_text, "knob_values", _default_knobs),
           (headers,)),
    Mutant("preview: an untuned method predicted from its estimate",
           lambda mp: mp.setattr(preview, "tunable", lambda method: True), (untuned,)),
    Mutant("summary: step compression rounded from the summary's 4-place figure",
           lambda mp: mp.setattr(html, "_compression", lambda s: s["step_compression"]), (same_compression,)),
]
