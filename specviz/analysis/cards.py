"""The registry read into plain cards (core/cards.py) for render: built on each call, so a method registered later
(a test's toy one) has its card too. The hooks that write per-event text (explain, group_reading) ride on the card as
the record's own callables: render calls them without importing the engine."""
from __future__ import annotations

from specviz.core.cards import Cards, MethodCard
from specviz.engine import registry


def card(m: registry.Method) -> MethodCard:
    """One record's card."""
    own = tuple(k for k in registry.all_knobs() if k.name in m.rule_knobs)
    return MethodCard(name=m.name, label=m.label, summary=m.summary, lossless=m.lossless, relaxation=m.relaxation,
                      reading=m.reading, forms_groups=m.groups is not None, drafts=bool(m.family.drafts),
                      rescorable=m.rescore is not None, rule_knobs=own, knob_names=tuple(m.rule_knobs),
                      explain=m.explain, group_reading=m.group_reading)


def cards() -> Cards:
    """Every registered method's card, in catalogue order, with the sliders' Knob records (registry.ui_knobs("main")).
    Built once per run (the app's RunState.cards)."""
    return Cards(((m.name, card(m)) for m in registry.REGISTRY.values()),
                 sliders=tuple(registry.ui_knobs("main")))


def symbol(knob_name: str) -> str:
    """Any knob as plots write it (λ, δ, τ_pos, ...; its name when it has no symbol), asked of its record."""
    return registry.knob(knob_name).sym
