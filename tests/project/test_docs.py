"""The documents a newcomer reads: the README stays one screen and claims what the registry says, every repository
path named in code, docs and the README exists, and no code points at an issue number nobody can open."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TOP = r"(?:specviz|docs|tests|scripts|assets|\.ci)"
SUB = r"(?:engine|models|analysis|render|app|core|scenes)"           # named without the specviz/ prefix in docs
PATH = re.compile(rf"(?<![\w./-])((?:{TOP}|{SUB})/[\w./-]*[\w/])")
# paths in other projects' repositories that the docs cite (the papers' released code), not ours
EXTERNAL = {"models/drafters/cnets_llamagen.py", "models/drafters/choices.py", "models/ea_model_llamagen.py",
            "models/ea_model_lumina_mgpt.py"}
# names that are not files: the installed package's assets folder, the screenshot folder a test run creates
VIRTUAL = {"specviz/_assets", "docs/screenshots"}
TEXT = (".py", ".md", ".toml", ".yml", ".txt")


def tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    return [f for f in out if f.endswith(TEXT) and not f.startswith("tests/fixtures/") and (ROOT / f).exists()]


def resolves(name: str, where: Path) -> bool:
    """A named path exists as written, under specviz/, beside the naming file, as a module (`app/session.race`,
    `specviz/__main__`), or as the prefix of files (`tests/mutation/mutants_`)."""
    name = name.rstrip("./")
    if name in EXTERNAL or any(name == v or name.startswith(v + "/") for v in VIRTUAL):
        return True
    for base in (ROOT, ROOT / "specviz", where):
        parts = name.split("/")
        stem = base.joinpath(*parts[:-1]) if len(parts) > 1 else base
        last = parts[-1]
        for cut in range(last.count(".") + 1):                      # module.attr.attr -> module
            head = last.rsplit(".", cut)[0] if cut else last
            if (stem / head).exists() or (stem / f"{head}.py").exists():
                return True
        if stem.is_dir() and any(p.name.startswith(last) for p in stem.iterdir()):
            return True
    return False


def stale_paths(files: dict[str, str]) -> list[str]:
    """`file:line: path` for every repository path named in the texts that does not exist."""
    bad = []
    for f, text in files.items():
        for n, line in enumerate(text.splitlines(), 1):
            for m in PATH.finditer(line):
                if "*" not in m.group(1) and not resolves(m.group(1), (ROOT / f).parent):
                    bad.append(f"{f}:{n}: {m.group(1)}")
    return bad


def test_every_named_path_exists():
    files = {f: (ROOT / f).read_text() for f in tracked() if f != "tests/project/test_docs.py"}   # its planted paths
    assert len(files) > 100
    assert not stale_paths(files)


def test_a_planted_stale_path_is_found():
    planted = {"docs/x.md": "see `specviz/render/html.py` and `specviz/ui.py`, `app/configs.make_configs`,\n"
                            "and engine/nowhere.py"}
    assert stale_paths(planted) == ["docs/x.md:1: specviz/ui.py", "docs/x.md:2: engine/nowhere.py"]


def test_the_readme_is_one_screen_with_the_registry_s_methods():
    from specviz.engine import registry  # the engine's import registers every method; only this test needs it
    text = README.read_text()
    assert len(text.encode()) <= 10 * 1024
    section = text[text.index("## Methods"):]
    rows = re.findall(r"^\| `(\w+)` \|", section[:section.index("\n## ", 3)], re.M)
    assert sorted(rows) == sorted(registry.METHODS) and len(rows) == len(set(rows))
    budget = registry.knob("cascade_budget")
    assert f"TV budget δ per step (default {budget.default})" in text
    # Present mode's method count: every registered one (test_browser_lecture's COUNTS[10] is list(METHODS))
    assert f"projector, 1 to {len(registry.METHODS)} methods, every registered one" in text


def test_the_readme_links_only_to_files_that_exist():
    for target in re.findall(r"\]\(([^)#]+)", README.read_text()):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target


@pytest.mark.parametrize("folder", ["specviz", "scripts", "tests", "app.py"])
def test_no_code_points_at_an_issue_number(folder):
    paths = [ROOT / folder] if folder.endswith(".py") else sorted((ROOT / folder).rglob("*.py"))
    hits = [f"{p.relative_to(ROOT)}:{n}" for p in paths for n, line in enumerate(p.read_text().splitlines(), 1)
            if re.search(r"\bissues? \d+", line, re.I)]
    assert not hits, hits


def _table_after(text: str, header: str) -> list[list[str]]:
    rows = text[text.index(header):].splitlines()[2:]
    return [[c.strip() for c in r.strip("|").split("|")] for r in rows[:next(i for i, r in enumerate(rows)
                                                                             if not r.startswith("|"))]]


def keyed_price_rows(readme: str, methods_md: str) -> tuple[list, list]:
    """The README's price of keyed noise and the measured table in docs/methods.md §9, as (method, compression papers
    → keyed, identical) rows."""
    ours = [[c[0].strip("`"), c[1], c[2]] for c in _table_after(readme, "| method | step compression, papers → keyed")]
    measured = [[c[0], f"{c[1]} → {c[2]}", c[6]] for c in _table_after(methods_md, "| method | compression papers |")
                if c[0] != "ar"]
    return ours, measured


def test_the_readme_s_price_of_keyed_noise_is_the_measured_table():
    ours, measured = keyed_price_rows(README.read_text(), (ROOT / "docs" / "methods.md").read_text())
    assert ours == measured and len(ours) == 9
    planted = re.sub(r"(\| `csd` \| [\d.]+ → )[\d.]+", r"\g<1>9.999", README.read_text())   # any measured row
    assert planted != README.read_text()
    assert keyed_price_rows(planted, (ROOT / "docs" / "methods.md").read_text())[0] != measured
