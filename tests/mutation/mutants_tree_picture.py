"""Wrong variants of the draft tree picture (specviz/render/tree_picture.py)."""
import dataclasses

from specviz.render import tree_picture as tp
from tests.render.test_tree_picture import test_a_tree_at_16_px_fits_a_lecture_hall_screen as fits_lecture
from tests.render.test_tree_picture import test_links_within_one_level_are_drawn_apart as links_apart
from tests.render.test_tree_picture import (
    test_the_legend_names_every_box_colour_and_both_links_the_picture_draws as legend_complete,
)
from tests.render.test_tree_picture import test_tree_layout_equals_the_recorded_tree_on_the_toy as layout_exact
from tests.support.mutants import Mutant

_LAYOUT, _FOCUS = tp.tree_layout, tp.focus_nodes


def _swapped(trace, step):
    """I and C drawn in each other's colour (same-level and consecutive-level links confused)."""
    lay = _LAYOUT(trace, step)
    return lay and dataclasses.replace(lay, links={"I": lay.links["C"], "C": lay.links["I"]})


def _every_judged_focus(judged, path):
    """the groups of every judged node drawn, rejected ones included, as if they had all been accepted."""
    return tuple(sorted(judged)) or _FOCUS(judged, path)


def _share_of_what_was_left(trace, step):
    """each level's cost as a share of the budget left when it started, not of the step's budget."""
    lay = _LAYOUT(trace, step)
    if not lay or lay.budget is None:
        return lay
    left = {e.level: e.groups.budget_left for e in trace.steps[step].events if e.groups and e.groups.budget_left > 0}
    return dataclasses.replace(lay, levels=tuple(dataclasses.replace(lc, share=lc.tv_cost / left.get(lc.level, 1.0))
                                                 for lc in lay.levels))


_LEGEND = tp.legend


def _no_grey_in_legend(layout):
    """the legend of the old picture: decisions only, the never-judged grey box left out."""
    return [it for it in _LEGEND(layout) if it.rgb != tp.UNJUDGED_RGB]


def _old_rows(mp):
    """the old picture's geometry: 52 px rows of 40 px thumbnails (a lecture hall's 16 px text no longer fits)."""
    mp.setattr(tp, "ROW", 52)
    mp.setattr(tp, "THUMB", 40)


def _decision_words_shifted(layout):
    """the box colours' words one decision off (relaxed called exact, rejected called relaxed, ...)."""
    items = _LEGEND(layout)
    boxes = [it for it in items if it.kind == "box"]
    texts = [it.text for it in boxes[1:]] + [boxes[0].text] if len(boxes) > 1 else [it.text for it in boxes]
    return [dataclasses.replace(it, text=t) for it, t in zip(boxes, texts)] + [it for it in items if it.kind != "box"]


VARIANTS = [
    Mutant("tree picture: I and C links swapped", lambda mp: mp.setattr(tp, "tree_layout", _swapped), (layout_exact,)),
    Mutant("tree picture: groups of rejected nodes drawn", lambda mp: mp.setattr(tp, "focus_nodes",
                                                                                 _every_judged_focus), (layout_exact,)),
    Mutant("tree picture: level share of the budget left", lambda mp: mp.setattr(tp, "tree_layout",
                                                                                 _share_of_what_was_left),
           (layout_exact,)),
    Mutant("tree picture: never-judged grey missing from the legend", lambda mp: mp.setattr(tp, "legend",
                                                                                    _no_grey_in_legend),
           (legend_complete,)),
    Mutant("tree picture: legend words one decision off", lambda mp: mp.setattr(tp, "legend",
                                                                        _decision_words_shifted), (legend_complete,)),
    Mutant("tree picture: same-level links all at one bend (merged)", lambda mp: mp.setattr(tp, "I_STEP", 0),
           (links_apart,)),
    Mutant("tree picture: the old rows (52 px, 40 px thumbnails)", _old_rows, (fits_lecture,)),
    Mutant("tree picture: words drawn at the old 15 px", lambda mp: mp.setattr(tp, "TEXT", 15), (fits_lecture,)),
]
