"""Wrong variants of what the names work made one thing: a drafter Protocol's declared signature
(engine/drafters/protocols.py), the tree methods the Drafter control names (app/configs.py), the label a lane shows
(app/race.py reads the factory's declared label). Protocol: tests/support/mutants.py."""
from __future__ import annotations

from typing import Any

from specviz.app import configs, race
from specviz.engine.drafters import protocols
from tests.app.test_names import a_lane_shows_its_factory_s_label, tree_methods_are_the_registry_s
from tests.engine.test_protocols import every_class_conforms
from tests.support.mutants import Mutant


class _Unlabelled(race._Lane):
    """Wrong (the old read): a lane whose drafter line falls back to "" (getattr with a default on another name)."""

    def __init__(self, model, cfg, factory):
        super().__init__(model, cfg, factory)
        self.drafter = getattr(factory, "name", "")


def _observe_with_default(self, tokens: list[int], positions: list[int], features: Any = None) -> None:
    """Wrong (the old declaration): features optional, which the EAGLE head's drafter cannot honour."""


VARIANTS = [
    Mutant("names: TreeDrafter.observe's features optional",
           lambda mp: mp.setattr(protocols.TreeDrafter, "observe", _observe_with_default), (every_class_conforms,)),
    Mutant("names: the Drafter info lists the tree methods typed once (sd, cascade, lantern)",
           lambda mp: mp.setattr(configs, "tree_methods", lambda: ("sd", "cascade", "lantern")),
           (tree_methods_are_the_registry_s,)),
    Mutant("names: a lane reads no label from its factory",
           lambda mp: mp.setattr(race, "_Lane", _Unlabelled), (a_lane_shows_its_factory_s_label,)),
]
