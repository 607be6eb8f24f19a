"""A plain, torch-free record of what render needs to know about a method (its "card"), so render draws a saved trace
without the engine; a knob needs no card (core/knobs.Knob is torch-free: render reads the record itself).
analysis/cards.py builds the cards from the registry; the callers (app, CLI, analysis) hand them to render."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True, kw_only=True)
class MethodCard:
    """A method as render shows it; `bare(name)` is the card of a name no longer registered (an old trace)."""
    name: str
    label: str                      # lane title
    summary: str = ""               # one line under the lane title
    lossless: bool = False
    relaxation: str = ""            # what the rule adds to q/p, in words (the inspector's verdict)
    reading: str = ""               # which reading of the paper runs, in which units
    forms_groups: bool = False      # its events carry the `groups` extension; the groups map draws it
    drafts: bool = True             # its family drafts (AR does not)
    rescorable: bool = False        # the instant preview re-scores its recorded drafts
    rule_knobs: tuple = ()          # the Knob record of each knob its rule reads, in the registry's order
    knob_names: tuple = ()          # the same knobs' names in the record's own order (export file names)
    explain: Callable[[dict, Any], str] | None = None    # (config, deciding event) -> the inspector's line
    group_reading: Callable[[dict], str] | None = None   # (config) -> how this run formed its groups

    @classmethod
    def bare(cls, name: str) -> "MethodCard":
        return cls(name=name, label=name)


class Cards(dict):
    """method name -> MethodCard; `of` answers a bare card for a name not among them. `sliders`: the Knob record of
    each knob the app shows beside the methods and previews (the registry's ui="main" knobs), in its order — what
    export names, the video's settings line and the preview text carry."""

    def __init__(self, items=(), /, *, sliders: tuple = (), **named):
        super().__init__(items, **named)
        self.sliders = tuple(sliders)

    def of(self, name: str) -> MethodCard:
        return self[name] if name in self else MethodCard.bare(name)

    def rescorable(self) -> list[str]:
        """The methods whose drafts the preview re-scores, in catalogue order."""
        return [c.name for c in self.values() if c.rescorable]

    def lossless(self) -> frozenset:
        """The lossless methods besides AR (the sweep plot's reference points)."""
        return frozenset(c.name for c in self.values() if c.lossless and c.name != "ar")
