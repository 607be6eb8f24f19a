"""The page's setting in its URL (app/link.py): a link's parameters become the controls' values, out-of-range numbers
are clamped with the typed value's line, anything unusable is named and left at the page's own; Copy link's query
reads back to the same controls."""
from urllib.parse import parse_qsl, urlsplit

import pytest

from specviz.app import link
from specviz.app.handlers import GEN_INPUTS
from specviz.engine.config import RunConfig
from specviz.engine.registry import ui_knobs

MODELS = ("scenes", "tiny")


def test_a_link_sets_prompt_seed_model_methods_noise_and_knobs():
    values, notes = link.read({"prompt": "a red house", "seed": "7", "model": "tiny", "methods": "csd,ar,sjd",
                               "noise": "keyed", "lam": "0.5", "delta": "0.3", "window": "8", "present": "1"},
                              MODELS)
    assert notes == []
    assert values == {"prompt": "a red house", "seed": 7, "model": "tiny", "methods": ["ar", "sjd", "csd"],
                      "noise": "keyed", "lam": 0.5, "delta": 0.3, "window": 8}
    assert isinstance(values["window"], int)


def test_out_of_range_numbers_are_clamped_with_the_typed_value_s_line():
    values, notes = link.read({"lam": "99", "delta": "-1", "tau_pos": "0.2"}, MODELS)
    lam = next(k for k in ui_knobs() if k.name == "lam")
    assert values == {"lam": lam.ui_hi, "delta": 0.0, "tau_pos": 0.5}
    assert notes == ["lam=99 is outside 0–10: set to 10, and the run uses 10.",
                     "delta=-1 is outside 0–1: set to 0, and the run uses 0.",
                     "tau_pos=0.2 is outside 0.5–1: set to 0.5, and the run uses 0.5."]


@pytest.mark.parametrize("query, note", [
    ({"bogus": "1"}, "bogus is not a setting of this page: ignored."),
    ({"seed": "-3"}, "seed=-3 is not a whole number ≥ 0: the page keeps its own."),
    ({"model": "/etc/passwd"}, "model=/etc/passwd is not offered here (scenes, tiny): the page keeps its own."),
    ({"noise": "loud"}, "noise=loud is not one of papers, keyed: the page keeps its own."),
    ({"lam": "nan"}, "lam=nan is not a finite number: the page keeps its own."),
    ({"lam": "abc"}, "lam=abc is not a finite number: the page keeps its own."),
    ({"window": "4.5"}, "window=4.5 is not a whole number: the page keeps its own."),
    ({"draft_model": "/some/path"}, "draft_model cannot be set from a link: the page keeps its own."),
])
def test_unusable_values_are_named_and_left_at_the_page_s_own(query, note):
    values, notes = link.read(query, MODELS)
    assert values == {} and notes == [note]


def test_unknown_methods_are_named_and_the_known_kept():
    values, notes = link.read({"methods": "ar,nope,csd"}, MODELS)
    assert values == {"methods": ["ar", "csd"]} and notes == [f"methods: nope not known (known: "
                                                              f"{', '.join(link.METHODS)})."]


def test_copy_link_round_trips_every_control():
    d = RunConfig()
    shown = {n: getattr(d, n) for n in GEN_INPUTS if hasattr(d, n)} | {
        "prompt": "a yellow sun & sand?", "seed": 11, "model": "tiny", "methods": ["ar", "csd", "cascade"],
        "noise": "keyed", "lam": 0.35, "delta": 0.45, "tau_pos": 0.8, "tree": "static", "window": 12}
    q = link.query(shown)
    back, notes = link.read(dict(parse_qsl(urlsplit(q).query)), MODELS)
    assert notes == []
    free_text = {k.name for k in ui_knobs() if k.kind is str and not k.choices}
    assert back == {n: v for n, v in shown.items() if n not in free_text}
    assert list(dict(parse_qsl(urlsplit(q).query))) == [n for n in GEN_INPUTS if n in back]   # GEN_INPUTS order


def test_no_setting_no_run():
    class Request:
        query_params = {"present": "1"}
    import gradio as gr
    with pytest.raises(gr.Error) as e:
        link.loader(MODELS)({"request": Request()})
    assert e.value.visible is False
    Request.query_params = {"seed": "4"}
    assert link.loader(MODELS)({"request": Request()}) == {"seed": 4}
