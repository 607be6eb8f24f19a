"""Wrong variants of the "Acceptance b" map (analysis/views.py: each cell's committed draft's b)."""
from specviz.analysis import views
from tests.analysis.test_accept_map import test_the_acceptance_map_is_each_committed_drafts_b as map_exact
from tests.analysis.test_accept_map import test_the_drawn_acceptance_map_colours_each_cell_from_b as drawn_exact
from tests.support.mutants import Mutant

_FIELD, _LAST = views._committed_draft_field, views._last_judged_field


def _exact_part(trace, name):
    """the lossless part min(1, q/p) drawn instead of b (relaxed cells look like exact ones)."""
    return _FIELD(trace, "exact_prob" if name == "accept_prob" else name)


def _last_judged(trace, name):
    """the last judged event at a position instead of the committing one (a rejected draft's b shown on the cell
    its resample committed)."""
    return _LAST(trace, name)


def _every_commit(trace, name):
    """every committing event's field, sampled tokens too (AR and bonus cells read b = 1, not grey)."""
    return trace.to_grid(name)


VARIANTS = [
    Mutant("acceptance map: min(1, q/p) instead of b", lambda mp: mp.setattr(views, "_committed_draft_field",
                                                                             _exact_part), (map_exact, drawn_exact)),
    Mutant("acceptance map: the last judged event, not the committing one", lambda mp: mp.setattr(
        views, "_committed_draft_field", _last_judged), (map_exact, drawn_exact)),
    Mutant("acceptance map: sampled tokens coloured as b = 1", lambda mp: mp.setattr(
        views, "_committed_draft_field", _every_commit), (map_exact, drawn_exact)),
]
