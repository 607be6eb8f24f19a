"""What the renames promise, as behaviour: the Drafter control names the registry's tree methods (not a list typed
once), and a lane shows the label its drafter factory declares (protocols.DrafterFactory.label)."""
from __future__ import annotations

from specviz.app import configs
from specviz.app.configs import make_configs
from specviz.app.race import race
from specviz.engine.drafters.protocols import DrafterFactory
from specviz.engine.registry import METHODS, REGISTRY
from tests.support.toy import toy


def tree_methods_are_the_registry_s():
    want = tuple(m for m in METHODS if REGISTRY[m].family.needs_drafter)
    assert configs.tree_methods() == want and "lanternpp" in want and "ar" not in want


def a_lane_shows_its_factory_s_label():
    model, head = toy(codes=4, grid=2)
    labelled = DrafterFactory(head.make, "the toy's head")
    cfgs = make_configs(["ar", "sd"], prompt="a red house", seed=1, tree_depth=2, tree_topk=2)
    *_, last = race(model, labelled, cfgs, fps=1000, px=32)
    assert {v.method: v.drafter for v in last.lanes} == {"ar": "", "sd": "the toy's head"}


def test_tree_methods_are_the_registry_s():
    tree_methods_are_the_registry_s()


def test_a_lane_shows_its_factory_s_label():
    a_lane_shows_its_factory_s_label()


def test_one_resolver_checks_everything_before_it_loads():
    """configs.resolve: the app's inputs -> (model, drafter factory, configs) in one call; a wrong value fails before
    any model is loaded, a right request loads its model once."""
    import pytest  # test-local: only this test expects a refusal

    from specviz.app.catalogue import Catalogue
    from specviz.core.knobs import ConfigError
    from tests.support.apptools import knob_inputs

    model, factory = toy(codes=4, grid=2)
    loads = []
    catalogue = Catalogue(lambda name: loads.append(name) or (model, factory), ("scenes",))
    inputs = {k: v for k, v in knob_inputs(["sd", "ar"]).items() if k != "opacity"}
    with pytest.raises(ConfigError):
        configs.resolve(catalogue, inputs | {"window": 0})
    with pytest.raises(ConfigError):
        configs.resolve(catalogue, inputs | {"model": "elsewhere"})
    assert loads == []
    got, made, cfgs = configs.resolve(catalogue, inputs)
    assert loads == ["scenes"] and got is model and made is factory
    assert [c.method for c in cfgs] == ["ar", "sd"] and {c.model for c in cfgs} == {"scenes"}
