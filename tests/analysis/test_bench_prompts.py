"""The bench's prompt sets: the shipped files load the counts their sources state, carry their source
and licence, --limit / --shuffle are deterministic, a user's file in each format, and the scenes refusal line."""
import csv
import hashlib

import pytest

from specviz.analysis import bench_cli, prompts
from specviz.core.paths import assets_dir

HERE = assets_dir() / "prompts"


def test_shipped_sets_load_the_counts_their_sources_state():
    parti, coco = prompts.load("parti"), prompts.load("coco")
    assert len(parti) == prompts.SETS["parti"].count == 1632          # google-research/parti README: P2
    assert len(coco) == prompts.SETS["coco"].count == 30000           # LlamaGen's evaluation: --how_many 30000
    assert parti[:2] == ["bond", "element"]
    assert coco[0] == "This wire metal rack holds several pairs of shoes and sandals"
    assert len(set(coco)) == 29354                                     # SOURCE.md: after stripping whitespace
    with (HERE / "coco_captions.csv").open(newline="") as f:
        assert len({r["Prompt"] for r in csv.DictReader(f)}) == 29371      # as written
    assert "29,371 distinct as written, 29,354 once" in (HERE / "SOURCE.md").read_text()


def test_the_files_are_the_sources_bytes_with_their_licence():
    note = (HERE / "SOURCE.md").read_text()
    for s in prompts.SETS.values():
        digest = hashlib.sha256((HERE / s.file).read_bytes()).hexdigest()
        assert digest in note and s.file in note
    assert "Apache License 2.0" in note and "CC BY 4.0" in note
    assert "1,632" in note and "30,000" in note


def test_limit_and_shuffle_are_deterministic():
    a = prompts.load("parti", limit=10, shuffle=3)
    assert a == prompts.load("parti", limit=10, shuffle=3) and len(a) == 10
    assert a != prompts.load("parti", limit=10, shuffle=4) and a != prompts.load("parti", limit=10)
    assert prompts.load("parti", limit=10) == prompts.load("parti")[:10]
    full = prompts.load("parti", shuffle=3)
    assert full[:10] == a and sorted(full) == sorted(prompts.load("parti"))     # a permutation, then the limit
    with pytest.raises(ValueError, match="--limit"):
        prompts.load("parti", limit=0)


def test_a_file_in_each_format(tmp_path):
    (tmp_path / "p.txt").write_text("a red house\n\n  a blue car  \n")
    assert prompts.load(str(tmp_path / "p.txt")) == ["a red house", "a blue car"]
    (tmp_path / "p.tsv").write_text("id\tcaption\n1\ta red house\n2\ta cat, asleep\n")
    assert prompts.load(str(tmp_path / "p.tsv")) == ["a red house", "a cat, asleep"]
    (tmp_path / "p.csv").write_text('text,n\n"a cat, asleep",1\n"say ""hi""",2\n')
    assert prompts.load(str(tmp_path / "p.csv")) == ["a cat, asleep", 'say "hi"']
    (tmp_path / "q.csv").write_text("first,second\nx,y\n")               # no known column: the first one
    assert prompts.load(str(tmp_path / "q.csv")) == ["x"]
    assert prompts.read_file(tmp_path / "q.csv", column="second") == ["y"]
    with pytest.raises(ValueError, match="no column 'third'"):
        prompts.read_file(tmp_path / "q.csv", column="third")
    with pytest.raises(FileNotFoundError, match="no such file"):
        prompts.load(str(tmp_path / "missing.txt"))


def test_scenes_refuses_what_its_grammar_cannot_say_with_one_line(tmp_path, capsys):
    (tmp_path / "p.txt").write_text("a red house\nbond\na quantum flux\nblue sky at night\n")
    kept, refused = bench_cli.resolve_prompts(str(tmp_path / "p.txt"), "scenes")
    assert [t for t, _ in kept] == ["a red house", "blue sky at night"] and refused == ["bond", "a quantum flux"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "2 of 4 prompts" in err and "'bond', 'a quantum flux'" in err
    other, none = bench_cli.resolve_prompts(str(tmp_path / "p.txt"), "some/other-model")
    assert [t for t, _ in other] == ["a red house", "bond", "a quantum flux", "blue sky at night"] and none == []
    (tmp_path / "no.txt").write_text("bond\n")
    with pytest.raises(ValueError, match="none of the 1 prompts"):
        bench_cli.resolve_prompts(str(tmp_path / "no.txt"), "scenes")
    assert len(bench_cli.resolve_prompts("6", "scenes", limit=4)[0]) == 4   # N: the grammar's own captions


def test_the_refusal_line_names_the_first_and_counts_all():
    line = prompts.refusal_line([f"p{i}" for i in range(7)], 9)
    assert line.startswith("scenes: 7 of 9 prompts") and "'p4', ..." in line and "'p5'" not in line


def test_the_prompt_files_are_shipped_with_the_package():
    import fnmatch
    import tomllib
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    setup = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    globs = setup["package-data"]["specviz._assets"]
    files = [p.relative_to(root / "assets").as_posix() for p in (root / "assets" / "prompts").iterdir()]
    assert sorted(files) == ["prompts/PartiPrompts.tsv", "prompts/SOURCE.md", "prompts/coco_captions.csv"]
    assert all(any(fnmatch.fnmatch(f, g) or fnmatch.fnmatch(f, g.replace("**/", "")) for g in globs) for f in files)
