"""Render is blind to the engine: importing any render module, and drawing a saved trace from plain cards, loads
neither torch nor the engine nor a backend (pyproject.toml's fourth import contract, checked here by running it)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RENDER = sorted(p.stem for p in (ROOT / "specviz" / "render").glob("*.py") if p.stem != "__init__")
WATCHED = ("torch", "specviz.engine", "specviz.models", "specviz.scenes", "gradio")


def loaded_after(code: str) -> list[str]:
    probe = code + f"\nimport sys, json\njson.dump(sorted(m for m in {WATCHED!r} if m in sys.modules), sys.stdout)"
    res = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.splitlines()[-1])


def test_importing_every_render_module_loads_neither_torch_nor_the_engine():
    assert len(RENDER) > 10                                    # the listing found the modules
    assert loaded_after("".join(f"import specviz.render.{m}\n" for m in RENDER)) == []


def test_drawing_a_saved_trace_from_cards_loads_neither_torch_nor_the_engine(tmp_path):
    from tests.support.toy import run, toy
    model, factory = toy(codes=8, grid=3)
    path = tmp_path / "t.json"
    run(model, factory, method="csd", seed=0, window=3).save(path)
    code = ("from specviz.core.cards import Cards, MethodCard\nfrom specviz.core.trace import Trace\n"
            "from specviz.analysis import views\nfrom specviz.render import html, panels\n"
            f"t = Trace.load({str(path)!r})\n"
            "cards = Cards(csd=MethodCard(name='csd', label='CSD', relaxation='λ·g(H)'))\n"
            "assert all(f'position {p}' in html.inspector(t, p, cards) for p in range(9))\n"
            "for kind in views.MAPS:\n    panels.heatmap(kind, {'csd': t}, {}, cards=cards)\n")
    assert loaded_after(code) == []


def test_the_probe_sees_torch_when_it_is_loaded():
    assert loaded_after("import torch") == ["torch"]
