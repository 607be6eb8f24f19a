"""One handler convention: every handler takes its inputs as one dict by name (and returns updates by name), except
the ones handlers.POSITIONAL names with the reason, which docs/architecture.md names too."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

from specviz.app.handlers import POSITIONAL, Handlers

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def handlers(cls) -> dict:
    return {n: f for n, f in vars(cls).items() if callable(f) and not n.startswith("_")}


def off_convention(cls, positional) -> list[str]:
    """Handlers that take anything but (inputs) and are not declared positional; declared ones that do take (inputs)."""
    out = []
    for name, fn in handlers(cls).items():
        params = list(inspect.signature(inspect.unwrap(fn)).parameters)[1:]
        if (params == ["inputs"]) == (name in positional):
            out.append(f"{name}({', '.join(params)})")
    return out


def test_every_handler_takes_one_dict_or_is_named_with_its_reason():
    assert off_convention(Handlers, POSITIONAL) == []
    assert all(POSITIONAL.values())


def test_the_architecture_names_each_exception():
    text = DOC.read_text().replace("\n  ", " ")
    said = re.search(r"handlers take their inputs as one dict by name .*?\(handlers\.POSITIONAL\):(.*?)\.\s", text)
    assert set(re.findall(r"`(\w+)`", said.group(1))) == set(POSITIONAL)
    assert f"the {['no', 'one', 'two', 'three', 'four'][len(POSITIONAL)]} Gradio calls positionally" in text


def test_a_handler_off_the_convention_is_found():
    class H:
        def good(self, inputs: dict): ...
        def clicked(self, st, evt): ...
        def declared(self, inputs: dict): ...
    assert off_convention(H, {"declared": "why"}) == ["clicked(st, evt)", "declared(inputs)"]
