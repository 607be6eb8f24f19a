"""The noise is chosen once (engine/randomness.choose): nothing else in the engine or core asks which noise a run is
in. An AST scan of specviz/engine and specviz/core (core/noise.py, which defines the readings, aside) finds every
comparison with the noise knob's values ("keyed", "papers"), every `is None` / truth test of a name that says noise,
and every isinstance check against a randomness class."""
import ast
from pathlib import Path

import pytest

from specviz.engine import randomness

ROOT = Path(__file__).resolve().parents[2] / "specviz"
SCANNED = ("engine", "core")
ASIDE = {Path("core/noise.py")}
VALUES = {"keyed", "papers"}
CLASSES = {"Papers", "Keyed", "Noise", "NoiseV1"}


def _names_noise(node) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "noise" in name.lower() or name == "rnd"


def noise_checks(source: str) -> list[int]:
    """Line numbers of noise-mode checks in `source`."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Constant) and s.value in VALUES for s in sides):
                out.append(node.lineno)
            elif any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops) and any(map(_names_noise, sides)):
                out.append(node.lineno)
        elif isinstance(node, (ast.If, ast.IfExp, ast.While)) and _names_noise(node.test):
            out.append(node.lineno)
        elif isinstance(node, ast.BoolOp) and any(map(_names_noise, node.values)):
            out.append(node.lineno)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance" and len(node.args) == 2:
            kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            if any(getattr(k, "id", getattr(k, "attr", "")) in CLASSES for k in kinds):
                out.append(node.lineno)
    return out


def test_no_noise_mode_check_outside_the_randomness_objects():
    found = []
    for part in SCANNED:
        for path in sorted((ROOT / part).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel not in ASIDE:
                found += [f"specviz/{rel}:{line}" for line in noise_checks(path.read_text())]
    assert not found, "the noise is asked of the run's randomness object, not checked: " + ", ".join(found)


@pytest.mark.parametrize("snippet", [
    'tok = sample(q, gen) if cfg.noise == "keyed" else None',
    'if getattr(cfg, "noise", "papers") != "papers":\n    pass',
    'if config.get("noise") == "keyed":\n    pass',
    "x = a if self.noise is None else b",
    "if c.noise is not None:\n    pass",
    "if self.noise:\n    pass",
    "x = ctx.noise and ctx.noise.race(0, q)",
    "if isinstance(c.rnd, Keyed):\n    pass",
])
def test_the_scan_finds_a_planted_check(snippet):
    assert noise_checks(snippet) == [1]


def test_the_scan_leaves_the_chooser_alone():
    """choose() looks the knob's value up (no comparison), and the objects' own methods branch on nothing."""
    assert noise_checks(Path(randomness.__file__).read_text()) == []
    assert noise_checks("rnd = KINDS[cfg.noise](cfg.seed, vocab)\ntok = rnd.draw(n, q)") == []
