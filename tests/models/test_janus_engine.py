"""The decoding engine and the CLI on Janus: tiny random Janus checkpoints saved to a tmp directory and
loaded through the same `--model PATH` path a user takes (specviz.models.load_model -> load_janus).

Target: tests/support/janus_tiny.py seed 0 (4x4 grid, 64 codes); draft model for the tree methods: the same shapes,
seed 1.
Two unrelated random models rarely agree, so the draft model's trees are mostly rejected (wide trees, tree_topk=16,
get some drafts accepted); the target drafting for itself (`self`) gets greedy trees accepted, which exercises the
tree-path KV compaction through the engine.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

torch.set_num_threads(1)

from specviz.core.records import COMMITTING  # noqa: E402
from specviz.core.trace import Trace  # noqa: E402
from specviz.engine.config import RunConfig  # noqa: E402
from specviz.engine.drafters import drafter_factory  # noqa: E402
from specviz.engine.registry import METHODS  # noqa: E402
from specviz.models import load_model  # noqa: E402
from specviz.models.runner import run  # noqa: E402
from tests.support.janus_tiny import tiny_pair  # noqa: E402
from tests.support.toy import CountingModel as Counting  # noqa: E402
from tests.support.toy import check_decisions  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PROMPT = "a red house"
N_POS = 16


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return tiny_pair(tmp_path_factory.mktemp("janus-engine"))


@pytest.fixture(scope="module")
def models(paths):
    return load_model(paths[0], "cpu"), load_model(paths[1], "cpu")


def go(paths, models, draft="draft", **kw) -> Trace:
    target, other = models
    kw.setdefault("prompt", PROMPT)
    dm = {"draft": other, "self": target, None: None}[draft]
    return run(RunConfig(model=paths[0], **kw), device="cpu", draft_model=dm)


def check_trace(t: Trace, tmp_path: Path, method: str, path: str) -> None:
    commits = [e.pos for s in t.steps for e in s.events if e.decision in COMMITTING]
    assert sorted(commits) == list(range(N_POS))                    # each position committed exactly once
    assert [e.token for _, (_, e) in sorted(t.committing().items())] == t.tokens
    assert len(t.tokens) == N_POS and all(0 <= x < 64 for x in t.tokens)
    assert t.method == method and t.model == path and t.config["model"] == path and t.grid == [4, 4]
    assert t.summary["tokens"] == N_POS and t.summary["target_forwards"] == len(t.steps)
    for s in t.steps[1:]:
        assert sum(e.decision in COMMITTING for e in s.events) >= 1
        check_decisions(s.events)
    t.save(tmp_path / "t.json")
    assert Trace.load(tmp_path / "t.json") == t                     # lossless JSON round trip


RUNS = [dict(method="ar"), dict(method="sjd", window=5), dict(method="csd", lam=0.5, delta=0.9, window=5),
        dict(method="gsd", window=5, gsd_gap=0.5),
        dict(method="sd"), dict(method="sd", tree="static", tree_sampling="sample"),
        dict(method="cascade", tau_pos=0.3, tau_seq=0.3), dict(method="lantern", lantern_delta=0.3),
        dict(method="gsd", window=5, gsd_mode="released", gsd_dist=4.0),
        dict(method="lanternpp", lanternpp_lambda=5.0, tree="static", tree_sampling="sample",
             lantern_residual="llamagen"),
        dict(method="sd", tree="static", draft="self"), dict(method="cascade", draft="self", tau_pos=0.3),
        dict(method="mcsjd", window=5), dict(method="csd", couple=1, lam=0.5, window=5),
        dict(method="sjdpac", window=14), dict(method="zipar", zipar_w=2), dict(method="pjd", pjd_c=2, window=3)]


@pytest.mark.parametrize("kw", RUNS, ids=lambda k: "-".join(str(v) for v in k.values()))
def test_every_method_end_to_end(paths, models, tmp_path, kw):
    kw = dict(kw)
    draft = kw.pop("draft", "draft")
    cm = Counting(models[0])
    dm = {"draft": models[1], "self": models[0]}[draft]
    t = run(RunConfig(model=paths[0], prompt=PROMPT, seed=1, tree_depth=3, **kw), model=cm, draft_model=dm)
    check_trace(t, tmp_path, kw["method"], paths[0])
    assert cm.calls == len(t.steps)                                 # one target forward per step
    if kw["method"] in ("sjd", "csd", "gsd") or draft == "self":
        assert t.summary["step_compression"] > 1                    # drafts do get accepted on Janus


def test_all_methods_covered():
    assert {k["method"] for k in RUNS} == set(METHODS)


def test_runner_loads_the_model_by_path(paths, models, tmp_path):
    """No model object handed in: the runner resolves RunConfig.model (a directory) the way the CLI does."""
    t = run(RunConfig(method="sd", model=paths[0], prompt=PROMPT, tree="chain"), device="cpu",
            draft_model=models[1])
    check_trace(t, tmp_path, "sd", paths[0])


LOSSLESS = [dict(method="sjd", window=5), dict(method="sjd", window=4, init="repeat_vertical"),
            dict(method="csd", lam=0.0, window=5),
            dict(method="sd", tree="chain"), dict(method="sd", tree="static"),
            dict(method="sd", tree="static", tree_topk=16),
            dict(method="sd", tree="static", draft="self"), dict(method="sd", tree="chain", draft="self"),
            dict(method="cascade", tau_pos=1.1, tau_seq=1.1, tree="static", tree_topk=16),
            dict(method="cascade", tau_pos=1.1, tau_seq=1.1, tree="chain", draft="self"),
            dict(method="lantern", lantern_delta=0.0, tree="static")]


@pytest.mark.parametrize("kw", LOSSLESS, ids=lambda k: "-".join(str(v) for v in k.values()))
def test_lossless_greedy_equals_ar(paths, models, kw):
    for cfg in (3.0, 1.0):                                          # with and without the CFG row
        ar = go(paths, models, method="ar", temperature=0.0, cfg=cfg).tokens
        assert go(paths, models, temperature=0.0, cfg=cfg, **kw).tokens == ar


def test_draft_model_must_share_the_codebook(models):
    from specviz.models.scenes import tiny
    with pytest.raises(ValueError, match="does not match"):
        drafter_factory(models[0], tiny(codes=16, grid=5))


def test_neighbour_table_chunked_equals_full(models, monkeypatch):
    import specviz.engine.codebook as dec

    class Vecs:
        def __init__(self, v):
            self.v = v

        def code_vectors(self):
            return self.v

    g = torch.Generator().manual_seed(0)
    for v in (models[0].code_vectors(), torch.randn(300, 3, generator=g)):
        d = torch.cdist(v, v)
        d.fill_diagonal_(float("inf"))
        full = d.topk(8, largest=False).indices
        for chunk_rows in (1, 7, 1000):
            monkeypatch.setattr(dec, "_NBR_CHUNK_FLOATS", chunk_rows * v.shape[0])
            assert torch.equal(dec.neighbour_table(Vecs(v), 8), full)


# -- command line ------------------------------------------------------------------------------------------------------
def cli(*args):
    env = {"OMP_NUM_THREADS": "1", "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HF_HUB_OFFLINE": "1",
           "HOME": os.environ.get("HOME", "/tmp")}
    return subprocess.run([sys.executable, "-m", "specviz", "generate", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=env)


def check_cli_run(r, tmp_path, method, path):
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.strip().splitlines()[-1])        # the last stdout line is the JSON summary
    assert summary["tokens"] == N_POS
    t = Trace.load(tmp_path / "t.json")
    assert t.summary == summary and t.method == method and t.model == path and t.config["seed"] == 0
    check_trace(t, tmp_path, method, path)
    from PIL import Image
    with Image.open(tmp_path / "x.png") as img:
        assert img.size == (8, 8)


@pytest.mark.slow
def test_cli_generate_csd(paths, tmp_path):
    r = cli("--model", paths[0], "--method", "csd", "--seed", "0", "--prompt", PROMPT,
            "--out", str(tmp_path / "x.png"), "--trace", str(tmp_path / "t.json"))
    check_cli_run(r, tmp_path, "csd", paths[0])


@pytest.mark.slow
def test_cli_generate_sd_with_draft_model(paths, tmp_path):
    r = cli("--model", paths[0], "--draft-model", paths[1], "--method", "sd", "--seed", "0", "--device", "cpu",
            "--out", str(tmp_path / "x.png"), "--trace", str(tmp_path / "t.json"))       # the default prompt
    check_cli_run(r, tmp_path, "sd", paths[0])


@pytest.mark.slow
def test_cli_missing_checkpoint_exit_2(paths, tmp_path):
    missing = str(tmp_path / "no-such-checkpoint")
    for args in (["--model", missing], ["--model", paths[0], "--draft-model", missing, "--method", "sd"]):
        r = cli(*args, "--device", "cpu")
        assert r.returncode == 2
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and missing in lines[0], r.stderr
        assert "Traceback" not in r.stderr and r.stdout == ""


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_without_cuda_is_a_clear_error(paths):
    from specviz.models.janus import load_janus
    with pytest.raises(ValueError, match="no CUDA device.*--device cpu"):
        load_janus(paths[0], device="cuda")
