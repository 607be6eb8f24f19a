"""Wrong variants of the map registry's readers (analysis/views.py MAPS): a list of maps written out by hand beside
the registry, so a map added in one record is missing there."""
from specviz.app import handlers, stream
from specviz.render import figures, panels
from tests.app.test_map_registry import BUILT_IN
from tests.app.test_map_registry import every_list_of_maps_carries_a_new_record as one_record
from tests.support.mutants import Mutant

_HEATMAP, _EXPORTED = panels.heatmap, panels.exported_kinds
_SLIDE = figures.slide_maps()


def _outputs():
    """the output names of the maps shipped today, as a tuple."""
    return tuple(f"map_{k}" for k in BUILT_IN)


def _heatmaps(traces, images, opacity=1.0, mark=None, only=None, *, cards):
    """every shipped map's composite (a hard-coded kind list)."""
    return {k: _HEATMAP(k, traces, images, opacity, mark, only, cards=cards) for k in BUILT_IN}


def _exported(traces, cards):
    """the shipped maps the export writes, whatever the registry holds."""
    return tuple(k for k in _EXPORTED(traces, cards) if k in BUILT_IN)


VARIANTS = [
    Mutant("maps: the app's outputs from a hard-coded tuple", lambda mp: mp.setattr(handlers, "map_outputs",
                                                                                   _outputs), (one_record,)),
    Mutant("maps: the lean stream's maps from a hard-coded tuple", lambda mp: mp.setattr(stream, "map_outputs",
                                                                                        _outputs), (one_record,)),
    Mutant("maps: every map's update from a hard-coded kind list", lambda mp: mp.setattr(panels, "heatmaps",
                                                                                        _heatmaps), (one_record,)),
    Mutant("maps: the export's list hard-coded", lambda mp: mp.setattr(panels, "exported_kinds", _exported),
           (one_record,)),
    Mutant("maps: the slide's columns hard-coded", lambda mp: mp.setattr(figures, "slide_maps", lambda: _SLIDE),
           (one_record,)),
]
