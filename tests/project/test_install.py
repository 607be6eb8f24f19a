"""specviz as an installable library: `pip install .` into a fresh venv outside the repository, then the
README's library example and the `specviz` entry point from an empty directory; plus the Spaces front matter."""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SOURCE_ONLY = shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", ".*cache", ".gradio", "out",
                                     "tests", "*.pyi")


def library_example() -> str:
    """The README's ```python block under "## Library" (its `...` loop body is valid Python)."""
    found = re.search(r"^## Library\n+```python\n(.*?)^```", README, re.S | re.M)
    assert found, "README.md has no ```python block under '## Library'"
    return found.group(1)


def test_every_subpackage_is_shipped():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "specviz").rglob("__init__.py")}
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert PYPROJECT["tool"]["setuptools"]["package-dir"]["specviz._assets"] == "assets"


def test_weights_are_found_through_paths_assets_dir():
    """A path built as <source tree>/"assets" works in a checkout but not after `pip install .`."""
    direct = [f"{p.relative_to(ROOT)}:{n}" for p in (ROOT / "specviz").rglob("*.py") if p.name != "paths.py"
              for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"""/ *["']assets["']""", line)]
    assert not direct, f"use specviz.core.paths.assets_dir() instead: {direct}"


def test_readme_is_a_space_and_keeps_its_two_commands():
    front = re.match(r"---\n(.*?)\n---\n", README, re.S)
    assert front, "README.md must start with Hugging Face Spaces front matter"
    meta = dict(line.split(": ", 1) for line in front.group(1).splitlines())
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py" and (ROOT / meta["app_file"]).exists()
    assert meta["python_version"] == '"3.11"' and meta["title"] and meta["emoji"]
    gradio = next(Requirement(r) for r in (ROOT / "requirements.txt").read_text().splitlines()
                  if r.startswith("gradio"))
    assert gradio.specifier.contains(meta["sdk_version"]), f"sdk_version {meta['sdk_version']} vs {gradio}"
    for cmd in ("pip install -r requirements.txt && python app.py", "pip install -r requirements-dev.txt && "
                "python -m pytest -n 2"):
        assert f"```bash\n{cmd}\n```" in README


def _offline_build_backend() -> str | None:
    """Why `pip install --no-index --no-build-isolation` cannot work here, or None when it can."""
    need = PYPROJECT["build-system"]["requires"]
    for spec in map(Requirement, ["pip", *need]):
        if importlib.util.find_spec(spec.name) is None:
            return f"{spec.name} is not installed, and an offline install cannot fetch it"
        if not spec.specifier.contains(version(spec.name)):
            return f"{spec.name} {version(spec.name)} does not satisfy {spec} and cannot be fetched offline"
    return None


def test_dev_requirements_install_the_build_backend():
    """The offline install below needs pyproject's build requirements in the venv: the README set-up (requirements-dev)
    must name each of them with a range inside the build's, so a fresh venv (setuptools 65 from Python 3.11, no
    `wheel`) can build."""
    lines = [raw.split("#")[0].strip() for raw in (ROOT / "requirements-dev.txt").read_text().splitlines()]
    dev = {r.name: r for r in (Requirement(line) for line in lines if line and not line.startswith("-r"))}
    for need in map(Requirement, PYPROJECT["build-system"]["requires"]):
        assert need.name in dev, f"requirements-dev.txt does not install the build requirement {need}"
        floor = next(s.version for s in dev[need.name].specifier if s.operator == ">=")
        assert need.specifier.contains(floor), f"requirements-dev.txt allows {dev[need.name]}, the build needs {need}"


@pytest.mark.slow
def test_pip_install_then_readme_example_and_entry_point_outside_the_repo(tmp_path):
    reason = _offline_build_backend()
    if reason:
        pytest.skip(f"offline install impossible: {reason}")
    src, venv, cwd = tmp_path / "specviz", tmp_path / "venv", tmp_path / "elsewhere"
    shutil.copytree(ROOT, src, ignore=SOURCE_ONLY)         # a pristine tree: no build/ left in the checkout
    cwd.mkdir()
    # the venv sees this interpreter's torch, gradio, setuptools, pip ... (through a .pth file: --system-site-packages
    # would show the base interpreter's, not those of the venv the tests run in); specviz itself only from this install
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    inner = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           capture_output=True, text=True, check=True).stdout.strip()
    outer = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    (Path(inner) / "outer_env.pth").write_text("\n".join(sorted(outer)) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")} | {"OMP_NUM_THREADS": "1"}
    run = dict(cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    pip = subprocess.run([python, "-m", "pip", "install", "--no-index", "--no-deps", "--no-build-isolation", src],
                         **run)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    shutil.rmtree(src)                                     # nothing may still read the source tree

    check = "\nimport specviz.models.scenes as _s\nprint('SPECVIZ_AT', _s.__file__, _s.ASSETS)\n"
    out = subprocess.run([python, "-c", library_example() + check], **run)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "'target_forwards'" in out.stdout                 # print(trace.summary)
    where = out.stdout.split("SPECVIZ_AT ")[1].split()
    assert all(Path(p).is_relative_to(venv) for p in where), f"specviz not imported from the venv: {where}"

    cli = subprocess.run([venv / "bin" / "specviz", "--help"], **run)
    assert cli.returncode == 0 and "generate" in cli.stdout, cli.stderr
