"""An export writes the groups map only when a method of the run forms groups (its record's `groups` hook): without
one that map is only a note."""
import pytest
import torch

from specviz.analysis import views
from specviz.analysis.cards import cards
from specviz.app.configs import make_configs
from specviz.app.race import race
from specviz.render import exports, panels
from tests.support.toy import toy


def _run(methods):
    torch.set_num_threads(1)
    model, factory = toy(codes=8, grid=4)
    *_, last = race(model, factory, make_configs(methods, prompt="red house", seed=0, tree_depth=2, tree_topk=2),
                    fps=1000)
    return last.traces, last.images


@pytest.mark.parametrize("methods, groups", [(["ar", "csd"], False), (["ar", "cascade"], True)])
def test_the_groups_map_is_exported_only_when_a_method_forms_groups(tmp_path, methods, groups):
    traces, images = _run(methods)
    names = [p.name for p in exports.export_run(traces, images, "red house", tmp_path, videos=False, cards=cards())]
    maps = sorted(n.split("_map_")[1][:-4] for n in names if "_map_" in n)
    assert maps == sorted(k for k in views.MAPS if k != "groups" or groups)
    assert ("groups" in panels.exported_kinds(traces, cards())) is groups
