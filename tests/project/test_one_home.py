"""Each public name has one home: every `from specviz.X import name` in the repository (specviz, app.py, scripts,
tests) names the module that defines `name` (a def, a class or an assignment at its top level) or a submodule of X.
The kept public API, for library users, is specviz/__init__ (lazy names) and specviz/runner (the README's
`from specviz.runner import stream, run`); nothing inside the repository imports through them."""
from __future__ import annotations

import ast
import importlib
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_of(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def defined(tree: ast.Module) -> set[str]:
    """Names a module defines at its top level (inside if / try too), not names it imports."""
    out: set[str] = set()

    def walk(body):
        for n in body:
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.add(n.name)
            elif isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign):
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                    out.update(x.id for x in ast.walk(t) if isinstance(x, ast.Name))
            elif isinstance(n, ast.If | ast.Try):
                walk(n.body), walk(n.orelse)
    walk(tree.body)
    return out


def second_paths(root: Path, files: list[Path], package: str = "specviz") -> list[str]:
    """'file:line: name from M (defined in neither M nor a submodule)' for every import through a module that does
    not define the name."""
    homes = {module_of(p, root): defined(ast.parse(p.read_text())) for p in (root / package).rglob("*.py")}
    out = []
    for f in files:
        for n in ast.walk(ast.parse(f.read_text())):
            if not (isinstance(n, ast.ImportFrom) and n.level == 0 and n.module in homes):
                continue
            for a in n.names:
                if a.name not in homes[n.module] and f"{n.module}.{a.name}" not in homes:
                    out.append(f"{f.relative_to(root)}:{n.lineno}: {a.name} from {n.module}")
    return out


def test_every_name_is_imported_from_its_home():
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    files = [ROOT / f for f in tracked if (ROOT / f).exists()]
    assert files and second_paths(ROOT, files) == []


def test_the_public_paths_are_the_homes_names():
    """The README's path and the package's lazy names give the very objects their homes define."""
    import specviz
    from specviz import runner
    home = importlib.import_module("specviz.models.runner")
    assert runner.run is home.run and runner.stream is home.stream and specviz.run is home.run
    assert set(runner.__all__) == {"run", "stream"}


def test_a_second_path_is_found(tmp_path):
    pkg = tmp_path / "pk"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "home.py").write_text("class Thing: ...\nLIMIT = 3\n")
    (pkg / "shim.py").write_text("from pk.home import Thing, LIMIT  # a re-export\n")
    user = tmp_path / "user.py"
    user.write_text("from pk.home import Thing\nfrom pk import sub, home\nfrom pk.shim import LIMIT\n")
    files = [user, pkg / "shim.py"]
    assert second_paths(tmp_path, files, "pk") == ["user.py:3: LIMIT from pk.shim"]


def abbreviated_modules(files: list[Path], modules=("statistics",)) -> list[str]:
    """'file:line: statistics as st' for every import that renames one of `modules` (its short name then reads like a
    record: `st` is the app's RunState everywhere else)."""
    return [f"{f.name}:{n.lineno}: {a.name} as {a.asname}" for f in files for n in ast.walk(ast.parse(f.read_text()))
            if isinstance(n, ast.Import) for a in n.names if a.name in modules and a.asname]


def test_statistics_is_never_abbreviated(tmp_path):
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert abbreviated_modules([ROOT / f for f in tracked if (ROOT / f).exists()]) == []
    planted = tmp_path / "p.py"
    planted.write_text("import os\nimport statistics as st\n")
    assert abbreviated_modules([planted]) == ["p.py:2: statistics as st"]
