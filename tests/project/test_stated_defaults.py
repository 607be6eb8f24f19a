"""A knob's default stated in words (docs, README, docstrings and comments) is its registry default: every
"`--knob-flag` … (default V" or "`knob_name` (…, default V)" within one clause is checked against the Knob record,
so a default changed in code cannot leave a sentence behind (docs/methods_trees.md once said CASCADE's budget
defaults to 0.5 while the knob said 1.0)."""
import re
from pathlib import Path

from specviz.engine import methods  # noqa: F401 (registers every method, and so its own knobs)
from specviz.engine.registry import all_knobs

ROOT = Path(__file__).resolve().parents[2]
# the same flag name on another program, with that program's own default
OTHERS = {("docs/gpu.md", "--cfg", "7.5"): "scripts/gpu_bench.py's --cfg, the reference samplers' CFG"}
TEXTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "specviz").rglob("*.py")),
         ROOT / "app.py"]


def stated(text: str, names: tuple[str, ...]) -> list[str]:
    """The values written as 'default V' after one of `names` (a flag or a name in backticks) in the same clause:
    no sentence end, no other backticked name and at most 60 characters between."""
    alt = "|".join(re.escape(n) for n in names)
    gap = r"(?:[^.;`\n]|\.(?!\s))"                  # a full stop ends the clause only before a space (not '1..8')
    pat = re.compile(rf"`(?:{alt})`{gap}{{0,60}}?\bdefault (?P<v>-?[0-9][0-9.]*[0-9]|[0-9])\b")
    return [m.group("v") for m in pat.finditer(text)]


def mismatches() -> list[str]:
    bad = []
    texts = {p: p.read_text(encoding="utf-8") for p in TEXTS}
    for k in all_knobs():
        if not isinstance(k.default, int | float) or isinstance(k.default, bool):
            continue
        for p, text in texts.items():
            for v in stated(text, (k.flag, k.name)):
                if float(v) != float(k.default) and (str(p.relative_to(ROOT)), k.flag, v) not in OTHERS:
                    bad.append(f"{p.relative_to(ROOT)}: {k.flag} 'default {v}', the knob's default is {k.default}")
    return bad


def test_the_finder_reads_the_forms_the_docs_use():
    assert stated("knob `--cascade-budget` δ (default 0.5, the paper's example)", ("--cascade-budget",)) == ["0.5"]
    assert stated("`pac_width` (K, 1..8, default 3), `pac_depth` (D, default 3)", ("pac_width",)) == ["3"]
    assert stated("`--window`. The default 16 is", ("--window",)) == []          # another sentence
    assert stated("`--window` and `--tree` (default 4)", ("--window",)) == []     # another knob's


def test_every_stated_default_is_the_registry_s():
    assert mismatches() == []
