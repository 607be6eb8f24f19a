"""The package's architecture (docs/architecture.md): no import cycle among specviz modules nor among its packages,
the layer and gradio contracts of pyproject.toml hold (`lint-imports`, also run by .ci/run), and reading a trace file
through the library loads neither torch nor gradio, every function-level import says why, and no module is over
300 lines."""
import ast
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]


def cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.find_modules_directly_imported_by(w)))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_cycle_among_specviz_modules():
    assert cycles(grimp.build_graph("specviz", cache_dir=None)) == []


def test_the_cycle_finder_finds_a_cycle(tmp_path, monkeypatch):
    pkg = tmp_path / "cyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from cyc import b\n")
    (pkg / "b.py").write_text("from cyc import c\n")
    (pkg / "c.py").write_text("from cyc import a\n")
    (pkg / "d.py").write_text("from cyc import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cycles(grimp.build_graph("cyc", cache_dir=None)) == [["cyc.a", "cyc.b", "cyc.c"]]


class Imports:
    """A package-level import graph with the two members `cycles` reads of a grimp graph."""

    def __init__(self, edges: dict[str, set[str]]):
        self.edges = edges
        self.modules = set(edges) | {b for bs in edges.values() for b in bs}

    def find_modules_directly_imported_by(self, node: str) -> set[str]:
        return self.edges.get(node, set())


def package_graph(root: Path, package: str, one_node: dict | None = None, ignored: frozenset = frozenset()) -> Imports:
    """The import graph of `package`'s packages, read from the source under `root` with ast (function-level imports
    too): each module stands for the package it is in (specviz.engine.decode -> specviz.engine, a package's
    __init__ -> the package itself), renamed by `one_node` (a layer's siblings as one node); the module imports in
    `ignored` ((importer, imported) pairs) are left out."""
    one_node = one_node or {}
    mods = {}                                                        # module -> (file, its package, is a package)
    for path in sorted((root / package.replace(".", "/")).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        is_pkg = parts[-1] == "__init__"
        mods[".".join(parts[:-1] if is_pkg else parts)] = (path, ".".join(parts[:-1]), is_pkg)

    def module(name: str) -> str:                                    # the module an imported name lives in
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    edges: dict[str, set[str]] = {}
    for name, (path, pkg, is_pkg) in mods.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = name.split(".")[:len(name.split(".")) - node.level + is_pkg]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for target in targets:
                imported = module(target)
                if not imported or (name, imported) in ignored:
                    continue
                a, b = one_node.get(pkg, pkg), one_node.get(mods[imported][1], mods[imported][1])
                if a != b:
                    edges.setdefault(a, set()).add(b)
    return Imports(edges)


def declared_layers() -> tuple[dict, frozenset]:
    """From the layer contract of pyproject.toml: its siblings declared as one layer (`specviz.scenes :
    specviz.models`, which import each other) as one node, and the reaches upward it names (`ignore_imports`)."""
    contract = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]
    one_node = {}
    for layer in contract["layers"]:
        siblings = [s.strip() for s in layer.replace("|", ":").split(":")]
        one_node.update({s: layer for s in siblings if len(siblings) > 1})
    return one_node, frozenset(tuple(i.split(" -> ")) for i in contract.get("ignore_imports", ()))


def test_the_layers_ignore_no_import():
    """No reach upward is excused: pyproject.toml's layers contract names no `ignore_imports` (the runner, which loads
    models, lives with them: specviz/models/runner.py)."""
    assert declared_layers()[1] == frozenset()


def test_no_import_cycle_among_specviz_packages():
    one_node, ignored = declared_layers()
    graph = package_graph(ROOT, "specviz", one_node, ignored)
    assert {"specviz.core", "specviz.engine", "specviz.engine.drafters", "specviz.scenes : specviz.models",
            "specviz.analysis", "specviz.render", "specviz.app"} <= graph.modules
    assert cycles(graph) == [], {n: sorted(graph.edges[n]) for c in cycles(graph) for n in c}


def test_the_package_graph_finds_a_cycle_no_module_cycle_shows(tmp_path):
    (tmp_path / "cyc" / "sub").mkdir(parents=True)
    files = {"__init__.py": "", "a.py": "from cyc.sub import b\n", "c.py": "import os\n", "sub/__init__.py": "",
             "sub/b.py": "from cyc.c import os\n", "sub/d.py": "from . import b\n"}
    for f, text in files.items():
        (tmp_path / "cyc" / f).write_text(text)
    assert cycles(package_graph(tmp_path, "cyc")) == [["cyc", "cyc.sub"]]
    assert cycles(package_graph(tmp_path, "cyc", {"cyc": "one", "cyc.sub": "one"})) == []
    assert cycles(package_graph(tmp_path, "cyc", ignored=frozenset({("cyc.sub.b", "cyc.c")}))) == []


def test_import_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.skip("import-linter is not installed (requirements-dev.txt)")
    res = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert " 0 broken" in res.stdout and "KEPT" in res.stdout


def test_reading_a_trace_loads_neither_torch_nor_gradio(tmp_path):
    from tests.support.toy import run, toy
    model, factory = toy(codes=8, grid=3)
    path = tmp_path / "t.json"
    run(model, factory, method="cascade", seed=0, tree_depth=2, tree_topk=2, tau_pos=0.0, tau_seq=0.0).save(path)
    code = ("import sys, json\nimport specviz\nfrom specviz.core.trace import Trace\n"
            f"t = Trace.load({str(path)!r})\n"
            "json.dump({'method': t.method, 'grid': t.grid, 'steps': len(t.steps),"
            " 'loaded': sorted(m for m in ('torch', 'gradio', 'specviz.engine', 'specviz.app') if m in sys.modules)},"
            " sys.stdout)")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["method"] == "cascade" and out["grid"] == [3, 3] and out["steps"] > 1
    assert out["loaded"] == [], f"reading a trace imported {out['loaded']}"


def unexplained_imports(paths) -> tuple[int, list[str]]:
    """(function-level imports, those without a reason): a reason is a comment on the import's line or on the line
    above its block of imports."""
    import ast  # only this check parses source
    total, bad = 0, []
    for p in paths:
        src = Path(p).read_text().splitlines()
        for fn in ast.walk(ast.parse("\n".join(src))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    total += 1
                    i = node.lineno - 1
                    while i > 0 and (src[i - 1].strip().startswith(("import ", "from ")) or not src[i - 1].strip()):
                        i -= 1
                    if "#" not in src[node.lineno - 1] and not (i > 0 and src[i - 1].strip().startswith("#")):
                        bad.append(f"{p}:{node.lineno}")
    return total, bad


def test_every_function_level_import_says_why():
    paths = sorted((ROOT / "specviz").rglob("*.py")) + [ROOT / "app.py"]
    total, bad = unexplained_imports(paths)
    assert total > 20 and not bad, bad


def test_an_unexplained_function_level_import_is_found(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def a():\n    # torch only here\n    import torch\n    import os\n\n\ndef b():\n    import json\n"
                 "    return json\n\n\ndef c():\n    import re  # why\n")
    assert unexplained_imports([f]) == (4, [f"{f}:8"])


MAX_LINES = 300                                   # a module a reader takes in at one sitting


def long_modules(paths) -> list[str]:
    """`path: N lines` for every file over MAX_LINES."""
    out = []
    for p in paths:
        n = len(Path(p).read_text().splitlines())
        if n > MAX_LINES:
            out.append(f"{p}: {n} lines")
    return out


def test_every_module_is_at_most_300_lines():
    assert not long_modules(sorted((ROOT / "specviz").rglob("*.py")) + [ROOT / "app.py"])


def test_a_long_module_is_found(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("x = 1\n" * (MAX_LINES + 1))
    assert long_modules([f]) == [f"{f}: {MAX_LINES + 1} lines"]
