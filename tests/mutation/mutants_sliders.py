"""Wrong variants of the knob lists derived from the registry: a list that keeps today's four
sliders by hand instead of reading ui_knobs("main"), and the preview's phrase of the sliders."""
from specviz.analysis import cards as cards_mod
from specviz.analysis import history
from specviz.app import sweep_tab
from specviz.core.cards import Cards
from specviz.engine.registry import Recomputed, ui_knobs
from specviz.render import html, video
from tests.engine.test_registry import a_new_slider_reaches_history_exports_caption_preview_and_sweep_opening as toy
from tests.render.test_slider_words import slider_words_exact
from tests.support.mutants import Mutant

FOUR = ("lam", "delta", "tau_pos", "tau_seq")
_CARDS, _SETTINGS, _EITHER = cards_mod.cards, video.settings_line, html.either


def _four_cards() -> Cards:
    """the cards with the sliders fixed at today's four (a new rule's slider left out of names, caption, preview)."""
    c = _CARDS()
    return Cards(c, sliders=tuple(k for k in c.sliders if k.name in FOUR))


def _no_or(words: list) -> str:
    """the phrase without its 'or': 'λ, δ, τ_pos, τ_seq'."""
    return ", ".join(words) if words else "a slider"


VARIANTS = [
    Mutant("history: the row's sliders are the four by hand", lambda mp: mp.setattr(
        history, "SLIDERS", Recomputed(lambda: tuple(k for k in ui_knobs("main") if k.name in FOUR))), (toy,)),
    Mutant("cards: the sliders handed to render are the four by hand", lambda mp: (
        mp.setattr(cards_mod, "cards", _four_cards), mp.setattr("tests.engine.test_registry.cards", _four_cards)),
        (toy,)),
    Mutant("sweep tab: the knobs a point can set are the old fixed list", lambda mp: mp.setattr(
        sweep_tab, "OPENED", ("lam", "delta", "tau_pos", "tau_seq", "cascade_budget", "pac_width", "pac_depth")),
        (toy,)),
    Mutant("video: the settings line leaves the sliders beyond the first four out", lambda mp: mp.setattr(
        video, "settings_line", lambda traces, sliders=(): _SETTINGS(traces, tuple(sliders)[:4])), (toy,)),
    Mutant("preview words: the sliders' phrase without its 'or'", lambda mp: mp.setattr(html, "either", _no_or),
           (slider_words_exact,)),
]
