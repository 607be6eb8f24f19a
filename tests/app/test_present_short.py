"""Present mode's controls say each knob's short name (core.knobs.Knob.short): the symbol where a knob has one, else
its name capitalised; present.js hands the browser that map, by the controls' elem_ids (their knob names)."""
import json

from specviz.app import present
from specviz.core.knobs import Knob
from specviz.engine.registry import ui_knobs


def test_short_names_are_symbols_else_capitalised_names():
    assert Knob("lam", float, 0.5, symbol="λ").short == "λ"
    assert Knob("noise", str, "papers").short == "Noise"
    assert [k.short for k in ui_knobs("main")] == ["λ", "δ", "τ_pos", "τ_seq"]


def test_the_page_js_carries_every_shown_knob_s_short_name():
    knobs = ui_knobs("setup") + ui_knobs("main")
    js = present.js(knobs)
    assert "__SHORT__" not in js
    line = next(s for s in js.splitlines() if "const SHORT" in s)
    assert json.loads(line.split("=", 1)[1].strip().rstrip(";")) == {k.name: k.short for k in knobs}
