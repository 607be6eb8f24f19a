"""The README's sentence on what the default run keeps (tests/support/cases.py, pyproject's `extended` marker): every
test function runs by default; of a screens x method-counts matrix only the diagonal does; a test over screens alone
runs on one screen, every screen kept by some test; the keyed scenes pairs 9-24, the 24-pair keyed check on LlamaGen
and Lumina-mGPT and the short soak's two-export schedule are `extended`; `-m extended` collects exactly the rest."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cases import diagonal, first, one

ROOT = Path(__file__).resolve().parents[2]
MATRICES = ["tests/browser/test_browser_lecture.py", "tests/browser/test_browser_present_first.py",
            "tests/browser/test_browser_replay_present.py", "tests/browser/test_browser_bench.py"]
KEYED = "tests/models/test_keyed_scenes.py"
ONE_SCREEN = ["tests/browser/test_browser_wait.py", "tests/browser/test_browser_steady.py",
              "tests/browser/test_browser_replay_steady.py", "tests/browser/test_browser_clicks.py",
              "tests/browser/test_browser_calm.py", "tests/browser/test_browser_present.py",
              "tests/browser/test_browser_keys.py"]
BACKENDS = "tests/models/test_keyed_backends.py"
SOAK = "tests/app/test_soak.py"
SCREENS = {"1920x1080", "1440x900", "1920x1080@150%"}


def extended(p) -> bool:
    return any(m.name == "extended" for m in p.marks)


def test_the_diagonal_runs_each_screen_and_each_count_once():
    got = diagonal(["a", "b", "c"], [1, 4, 10])
    kept = [p.values for p in got if not extended(p)]
    assert kept == [("a", 1), ("b", 4), ("c", 10)]
    assert [p.id for p in got][:3] == ["a-1", "a-4", "a-10"] and sum(map(extended, got)) == 6


def test_first_keeps_the_first_cases():
    got = first([("x", 0), ("y", 1), ("z", 2)], 2)
    assert [extended(p) for p in got] == [False, False, True] and got[2].values == ("z", 2)


def test_one_keeps_one_screen():
    got = one(["a", "b", "c"], "b")
    assert [extended(p) for p in got] == [True, False, True] and [p.id for p in got] == ["a", "b", "c"]


# one process collects every selection in turn (the imports, most of a collection's time, paid once); each
# pytest.main reads the project's addopts as `python -m pytest` does, `-m` given after them overriding theirs
COLLECT = """import sys, pytest
for args in sys.argv[1:]:
    print('@@@', flush=True)
    pytest.main(['--co', '-p', 'no:cacheprovider', *args.split('\\x1f')[1:]])
"""


def collect(*selections) -> list[list[str]]:
    """Node ids as the project's own addopts collect them (its `-q`: one id a line), per selection: a tuple of extra
    arguments, () for none."""
    files = [*MATRICES, *ONE_SCREEN, KEYED, BACKENDS, SOAK]
    out = subprocess.run([sys.executable, "-c", COLLECT, *("\x1f".join(["", *sel, *files]) for sel in selections)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600).stdout
    parts = out.split("@@@\n")[1:]
    assert len(parts) == len(selections), out[-2000:]
    return [[line for line in part.splitlines() if "::" in line] for part in parts]


@pytest.mark.slow
def test_the_default_run_keeps_every_test_and_extended_the_rest():
    default, rest, every = collect((), ("-m", "extended"), ("-m", "extended or not extended"))
    assert default and rest and set(default).isdisjoint(rest) and len(default) + len(rest) == len(every)
    name = lambda node: node.split("[")[0]                                               # noqa: E731
    assert {name(n) for n in default} == {name(n) for n in default + rest}, "a test runs in no default case"
    seeds = sorted(int(re.search(r"seed(\d+)", n).group(1)) for n in rest if n.startswith(KEYED))
    assert seeds == list(range(8, 24))
    for f in MATRICES:
        kept = {re.search(r"\[(.+)\]", n).group(1) for n in default if n.startswith(f) and "[" in n}
        assert kept == {"1920x1080-1", "1440x900-4", "1920x1080@150%-10"}, (f, kept)
        assert sum(n.startswith(f) for n in rest) == 6, f
    kept = {}
    for n in default:
        if n.split("::")[0] in ONE_SCREEN and "[" in n:
            kept.setdefault(name(n), []).append(re.search(r"\[(.+)\]", n).group(1))
    assert kept and all(len(v) == 1 for v in kept.values()), kept              # one screen a test
    assert {v[0] for v in kept.values()} == SCREENS, kept                      # every screen some test's
    assert {n.split("::")[1] for n in rest if n.startswith(BACKENDS)} == {
        "test_lossless_methods_paint_ars_keyed_image_24_pairs[llamagen]",
        "test_lossless_methods_paint_ars_keyed_image_24_pairs[lumina]"}
    assert [n.split("::")[1] for n in rest if n.startswith(SOAK)] == ["test_short_soak[two-exports]"]
    assert "test_short_soak[one-export]" in {n.split("::")[1] for n in default if n.startswith(SOAK)}
