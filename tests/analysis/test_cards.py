"""The methods' cards (analysis/cards.py -> core/cards.py): each card says what its registry record says, so render,
which reads only cards, shows what the registry holds; a name no longer registered gets a bare card."""
from __future__ import annotations

from specviz.analysis import front
from specviz.analysis.cards import cards
from specviz.core.cards import MethodCard
from specviz.engine import registry


def every_card_mirrors_its_record() -> None:
    cs = cards()
    assert list(cs) == list(registry.REGISTRY)
    for name, m in registry.REGISTRY.items():
        c = cs.of(name)
        assert (c.name, c.label, c.summary, c.relaxation, c.reading) == (m.name, m.label, m.summary, m.relaxation,
                                                                       m.reading)
        assert c.lossless is m.lossless, name
        assert c.forms_groups is (m.groups is not None), name
        assert c.drafts is bool(m.family.drafts), name
        assert c.rescorable is (m.rescore is not None), name
        assert c.knob_names == tuple(m.rule_knobs)
        assert all(k is registry.knob(k.name) for k in c.rule_knobs), "a knob reaches render as its own record"
        assert {k.name for k in c.rule_knobs} == set(m.rule_knobs)
        assert c.explain is m.explain and c.group_reading is m.group_reading


def test_every_card_mirrors_its_record():
    every_card_mirrors_its_record()


def the_sweeps_references_are_the_lossless_records() -> None:
    want = frozenset(m.name for m in registry.REGISTRY.values() if m.lossless and m.name != "ar")
    assert cards().lossless() == front.lossless_methods() == want and "sjdpac" in want and "csd" not in want


def test_the_sweeps_references_are_the_lossless_records():
    the_sweeps_references_are_the_lossless_records()


def test_an_unregistered_name_gets_a_bare_card():
    c = cards().of("gone")
    assert c == MethodCard.bare("gone") and c.label == "gone" and not c.forms_groups and c.drafts
    assert c.rule_knobs == () and c.explain is None and not c.rescorable
