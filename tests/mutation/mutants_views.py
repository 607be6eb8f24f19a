"""Wrong variants of what the app draws outside the rules: the accepted-length histogram (charts.bar_chart)."""
from specviz.render import charts
from tests.render.test_drawing import test_bar_chart_bars_are_exactly_proportional_to_the_counts as bars_exact
from tests.support.mutants import Mutant

_BAR_CHART = charts.bar_chart


def _shifted(series, *a, **k):
    """accepted_hist read one slot off (bars for k tokens drawn at k + 1)."""
    return _BAR_CHART({n: [0, *c] for n, c in series.items()}, *a, **k)


def _per_series_share(series, *a, **k):
    """each method scaled to its own total (shares), so bars of different methods are not comparable."""
    return _BAR_CHART({n: [x / max(1, sum(c)) for x in c] for n, c in series.items()}, *a, **k)


VARIANTS = [
    Mutant("histogram: accepted lengths drawn one slot off", lambda mp: mp.setattr(charts, "bar_chart", _shifted),
           (bars_exact,)),
    Mutant("histogram: each method scaled to its own total", lambda mp: mp.setattr(charts, "bar_chart",
                                                                                   _per_series_share), (bars_exact,)),
]
