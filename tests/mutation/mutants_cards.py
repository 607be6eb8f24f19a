"""Wrong variants of the methods' cards (specviz/analysis/cards.py): a card that says something its record does not."""
import dataclasses

from specviz.analysis import cards
from tests.analysis.test_cards import every_card_mirrors_its_record as mirrors
from tests.analysis.test_cards import the_sweeps_references_are_the_lossless_records as references
from tests.support.mutants import Mutant

_CARD = cards.card


def _lossless_from_knobs(m):
    """lossless read off the wrong field: a rule without knobs taken for a lossless one (SJD-PAC has knobs)."""
    return dataclasses.replace(_CARD(m), lossless=not m.rule_knobs)


def _groups_from_rescore(m):
    """forms groups read off the wrong hook: every method the preview re-scores (CSD too) drawn as a group former."""
    return dataclasses.replace(_CARD(m), forms_groups=m.rescore is not None)


VARIANTS = [
    Mutant("cards: lossless from the rule's knobs", lambda mp: mp.setattr(cards, "card", _lossless_from_knobs),
           (mirrors, references)),
    Mutant("cards: groups from the re-scoring hook", lambda mp: mp.setattr(cards, "card", _groups_from_rescore),
           (mirrors,)),
]
