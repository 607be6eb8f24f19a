"""The CLI contract: one JSON summary line last; bad input -> one clear error line, exit code 2, no traceback."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HAVE_MODEL = (ROOT / "assets" / "target.safetensors").exists()


def cli(*args):
    return subprocess.run([sys.executable, "-m", "specviz", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("args,needle", [
    (["--method", "nope"], "method"),
    (["--temperature", "-1"], "temperature"),
    (["--prompt", ""], "prompt"),
    (["--lam", "nan"], "lam"),
    (["--window", "1"], "window"),
    (["--lam", "inf"], "lam"),
    (["--seed", "-1"], "seed"),
    (["--seed", "1e30"], "seed"),
    (["--top-k", "99999999999"], "top-k"),
    (["--window", "2.5"], "window"),
    (["--prompt", "a" * 100_000], "prompt"),
    (["--model", "http://evil.example/x"], "not available"),
])
@pytest.mark.slow
def test_bad_input_one_line_exit_2(args, needle):
    r = cli("generate", *args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0]
    assert "Traceback" not in r.stderr


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_MODEL, reason="assets/target.safetensors not trained yet")
def test_grid_mismatch_and_unknown_words():
    r = cli("generate", "--grid", "12x12")
    assert r.returncode == 2 and "grid" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = cli("generate", "--prompt", "zzz qqq")
    assert r.returncode == 2 and "understands none" in r.stderr


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_MODEL, reason="assets/target.safetensors not trained yet")
def test_generate_writes_files(tmp_path):
    r = cli("generate", "--method", "csd", "--seed", "3", "--out", str(tmp_path / "a.png"),
            "--trace", str(tmp_path / "t.json"))
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["tokens"] == 256 and summary["step_compression"] > 1
    assert (tmp_path / "a.png").stat().st_size > 100
    t = json.loads((tmp_path / "t.json").read_text())
    assert t["method"] == "csd" and t["summary"] == summary and t["config"]["seed"] == 3
