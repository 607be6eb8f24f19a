"""The sliders' words drawn for the app's preview (render/html.either: the registry's ui="main" symbols as one phrase
of alternatives; the preview table's knob line) for today's four sliders."""
from specviz.analysis.cards import cards
from specviz.engine.registry import KnobValues
from specviz.render import html


def slider_words_exact() -> None:
    assert html.either([]) == "a slider"
    assert html.either(["λ"]) == "λ"
    assert html.either(["λ", "δ"]) == "λ or δ"
    assert html.either([k.sym for k in cards().sliders]) == "λ, δ, τ_pos or τ_seq"
    knobs = KnobValues(lam=0.3, delta=0.5, tau_pos=0.9, tau_seq=0.875)
    assert "λ = 0.30, δ = 0.50, τ_pos = 0.90, τ_seq = 0.88. " in html.preview_table([], knobs, cards())


def test_slider_words_are_exact():
    slider_words_exact()
