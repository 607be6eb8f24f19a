"""LlamaGen backend (specviz/models/llamagen*.py).

- Pinned: tests/fixtures/llamagen_ref.safetensors holds the reference implementation's numbers on seeded random
  weights (scripts/pin_llamagen.py; no reference code here). We rebuild the same weights from the recorded seeds and
  must match its prefill / window logits and hidden states, decoded pixels, and greedy tokens (the last through our
  decoding loop). Measured on CPU fp32: max |Δ logits| 2.7e-5 (relative 1e-6), |Δ hidden| 1e-6, |Δ pixels| 1e-5.
- Released layout: tiny random `.pt` pickles as LlamaGen's training scripts write them, converted with
  `python -m specviz convert llamagen`, loaded by `--model DIR`; a smaller GPT drafts for the tree methods.
- Bad input: missing / extra keys, wrong shapes, the wrong family, a pickle that carries code: one error line, nothing
  written.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

torch.set_num_threads(1)

from specviz.__main__ import main  # noqa: E402
from specviz.analysis import views  # noqa: E402
from specviz.analysis.cards import cards  # noqa: E402
from specviz.core.records import COMMITTING  # noqa: E402
from specviz.core.trace import Trace  # noqa: E402
from specviz.engine.config import RunConfig  # noqa: E402
from specviz.engine.drafters import drafter_factory  # noqa: E402
from specviz.engine.registry import METHODS  # noqa: E402
from specviz.models import load_model  # noqa: E402
from specviz.models.llamagen import LlamaGenModel  # noqa: E402
from specviz.models.llamagen_net import GPTConfig, LlamaGenGPT  # noqa: E402
from specviz.models.llamagen_vq import VQConfig, VQDecoder  # noqa: E402
from specviz.models.runner import run  # noqa: E402
from specviz.render import panels  # noqa: E402
from tests.models.test_janus import ancestors_mask  # noqa: E402  (one oracle of the tree mask)
from tests.support import llamagen_tiny as lt  # noqa: E402
from tests.support.toy import check_decisions  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "llamagen_ref.safetensors"
PROMPT = "a red house"


def build(gcfg: GPTConfig, vcfg: VQConfig, gseed: int, vseed: int, text=None) -> LlamaGenModel:
    gpt, vq = LlamaGenGPT(gcfg), VQDecoder(vcfg)
    gpt.load_state_dict(lt.gpt_weights(gcfg, gseed))
    vq.load_state_dict(lt.vq_weights(vcfg, vseed))
    return LlamaGenModel(gpt, vq, name="tiny-llamagen", text_encoder=text)


@pytest.fixture(scope="module")
def ref():
    from safetensors import safe_open
    with safe_open(FIXTURE, "pt") as f:
        meta = json.loads(f.metadata()["json"])
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    cap, mask = tensors["caption"], tensors["caption_mask"].bool()
    model = build(GPTConfig(**meta["gpt"]), VQConfig(**meta["vq"]), meta["seeds"]["gpt"], meta["seeds"]["vq"],
                  text=lambda text: (cap, mask))            # every prompt -> the recorded caption vectors
    return model, tensors, meta


@pytest.mark.parametrize("cfg", [3.0, 1.0])
def test_matches_the_reference_fixture(ref, cfg):
    model, t, meta = ref
    tag = f"cfg{cfg:g}"
    pf = model.prefill(PROMPT, cfg)
    torch.testing.assert_close(pf.logits, t[f"prefill_logits_{tag}"], atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(pf.hidden, t[f"prefill_hidden_{tag}"], atol=1e-5, rtol=1e-5)
    lg, h = model.forward(pf.state, t["window_tokens"], torch.arange(meta["window"]))
    torch.testing.assert_close(lg, t[f"window_logits_{tag}"], atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(h, t[f"window_hidden_{tag}"], atol=1e-5, rtol=1e-5)


def test_pixels_match_the_reference(ref):
    model, t, _ = ref
    torch.testing.assert_close(model.decode_pixels(t["greedy_cfg3"]), t["pixels_cfg3"], atol=1e-4, rtol=1e-5)
    assert model.decode_image(t["greedy_cfg3"]).size == (64, 64)                  # VQ-16: 4x4 tokens -> 64 px


@pytest.mark.parametrize("method", ["ar", "sjd", "sd"])
def test_greedy_through_our_loop_reproduces_the_reference(ref, method):
    model, t, _ = ref
    draft = model if method == "sd" else None                                        # the target drafts for itself
    for cfg in (3.0, 1.0):
        rc = RunConfig(method=method, model="tiny-llamagen", prompt=PROMPT, temperature=0.0, cfg=cfg, window=5)
        assert run(rc, model=model, draft_model=draft).tokens == t[f"greedy_cfg{cfg:g}"].tolist()


def test_tree_forward_equals_paths_and_commit_compacts(ref):
    """A flattened tree (nodes at equal depth share a position) gives each node the law of its own path; committing
    a path then continuing equals feeding that path; a wide tree grows the cache."""
    model, _, _ = ref
    toks, parents, pos = [5, 7, 9, 11, 13, 3], [-1, 0, 0, 1, 2, 4], [0, 1, 1, 2, 2, 3]
    pf = model.prefill(PROMPT, 3.0)
    lg, h = model.forward(pf.state, torch.tensor(toks), torch.tensor(pos), ancestors_mask(parents))
    model.commit(pf.state, torch.tensor([0, 2, 4]))
    nxt, _ = model.forward(pf.state, torch.tensor([3]), torch.tensor([3]))
    model.commit(pf.state, torch.tensor([0]))
    for node in range(len(toks)):
        path, j = [], node
        while j >= 0:
            path.insert(0, j)
            j = parents[j]
        q = model.prefill(PROMPT, 3.0)
        want, want_h = model.forward(q.state, torch.tensor([toks[i] for i in path]),
                                     torch.tensor([pos[i] for i in path]))
        torch.testing.assert_close(lg[node], want[-1], atol=1e-4, rtol=1e-5)
        torch.testing.assert_close(h[node], want_h[-1], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(nxt[0], lg[5], atol=1e-4, rtol=1e-5)                 # 3 after path 0-2-4 = node 5
    wide = model.prefill(PROMPT, 1.0)
    n = 150                                                                          # a wide tree: 150 scratch rows
    lg, _ = model.forward(wide.state, torch.tensor([5] + [7] * (n - 1)), torch.tensor([0] + [1] * (n - 1)),
                          ancestors_mask([-1] + [0] * (n - 1)))
    model.commit(wide.state, torch.tensor([0, n - 1]))
    assert torch.allclose(lg[1], lg[n - 1]) and wide.state.length == 122


# -- released layout -> convert -> load -> every method through the CLI ---------------------------------------------
@pytest.fixture(scope="module")
def ckpts(tmp_path_factory):
    root = tmp_path_factory.mktemp("llamagen")
    return (root, *lt.converted_pair(root))


def test_converted_directory_loads_and_encodes_text(ckpts):
    root, target, draft = ckpts
    m, d = load_model(target, "cpu"), load_model(draft, "cpu")
    assert (m.grid, m.codebook_size, m.hidden_size, d.hidden_size) == ((4, 4), 64, 64, 32)
    assert sorted(p.name for p in Path(target).iterdir()) == ["config.json", "gpt.safetensors", "text_encoder",
                                                             "vq.safetensors"]
    emb, mask = m.text_encoder("A red  house")
    assert emb.shape == (120, 32) and mask.tolist() == [True] * 4 + [False] * 116           # 3 words + </s>
    assert m.code_vectors().shape == (64, 8) and torch.allclose(m.code_vectors().norm(dim=1), torch.ones(64))
    assert m.decode_image(torch.zeros(16, dtype=torch.long)).size == (8, 8)


def check_trace(t: Trace, method: str, path: str, n_pos: int = 16) -> None:
    t.check()
    commits = [e.pos for s in t.steps for e in s.events if e.decision in COMMITTING]
    assert sorted(commits) == list(range(n_pos)) and len(t.tokens) == n_pos
    assert t.method == method and t.model == path and t.summary["target_forwards"] == len(t.steps)
    for s in t.steps[1:]:
        check_decisions(s.events)


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_through_the_cli(ckpts, tmp_path, method, capsys):
    _, target, draft = ckpts
    window = ["--window", "14"] if method == "sjdpac" else []
    rc = main(["generate", "--model", target, "--draft-model", draft, "--method", method, "--seed", "0",
               "--prompt", PROMPT, "--device", "cpu", "--tree-depth", "3", "--grid", "4x4", *window,
               "--out", str(tmp_path / "x.png"), "--trace", str(tmp_path / "t.json")])
    out = capsys.readouterr()
    assert rc == 0, out.err
    t = Trace.load(tmp_path / "t.json")
    assert json.loads(out.out.strip().splitlines()[-1]) == t.summary
    check_trace(t, method, target)


@pytest.mark.slow
def test_python_m_specviz_generate_with_a_draft_model(ckpts, tmp_path):
    """One run in a fresh interpreter: `python -m specviz generate` resolves a converted directory by itself."""
    import os
    import subprocess
    import sys
    _, target, draft = ckpts
    env = {"OMP_NUM_THREADS": "1", "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HF_HUB_OFFLINE": "1",
           "HOME": os.environ.get("HOME", "/tmp")}
    r = subprocess.run([sys.executable, "-m", "specviz", "generate", "--model", target, "--draft-model", draft,
                        "--method", "sd", "--prompt", PROMPT, "--out", str(tmp_path / "x.png"), "--trace",
                        str(tmp_path / "t.json")], cwd=Path(__file__).resolve().parents[2], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    check_trace(Trace.load(tmp_path / "t.json"), "sd", target)


def test_cascade_groups_form_from_hidden_states(ckpts):
    _, target, draft = ckpts
    m, d = load_model(target, "cpu"), load_model(draft, "cpu")
    kw = dict(method="cascade", model=target, prompt=PROMPT, seed=1, tree="static", tree_topk=4, tree_depth=3)
    loose = run(RunConfig(tau_pos=0.0, tau_seq=0.0, **kw), model=m, draft_model=d)
    cells = views.group_cells(loose)
    assert any(c.interchangeable or c.convergent for c in cells)
    assert any(c.similarity != 0 for c in cells)
    strict = run(RunConfig(tau_pos=1.1, tau_seq=1.1, **kw), model=m, draft_model=d)   # no cosine reaches 1.1
    assert not any(c.interchangeable or c.convergent for c in views.group_cells(strict))


@pytest.mark.slow
@pytest.mark.parametrize("grid", [16, 32])
def test_grids_decode_and_draw(grid, tmp_path):
    """Race frame, maps, the inspector's replay and the exports on LlamaGen's 256 px and 512 px token grids."""
    m = build(lt.tiny_gpt(grid=grid, dim=32, n_layer=1, n_head=2), lt.tiny_vq(ch_mult=(1, 1)), 0, 1,
              text=lambda text: (torch.ones(120, 32), torch.arange(120) < 4))
    t = run(RunConfig(method="sjd", model="tiny-llamagen", prompt=PROMPT, window=16, seed=0), model=m)
    check_trace(t, "sjd", "tiny-llamagen", grid * grid)
    assert t.grid == [grid, grid]
    img = m.decode_image(t.tokens)
    assert img.size == (2 * grid, 2 * grid)
    frame = panels.race_frame(img, views.decided_mask(t), m.grid)
    assert frame.size[0] > 0
    for kind in ("decision", "entropy"):
        assert panels.heatmap(kind, {"sjd": t}, {"sjd": np.asarray(img)}, cards=cards()).size[0] > 0
    replay, caption = panels.replay_image(t, np.asarray(img), len(t.steps) // 2)
    assert replay.size[0] > 0 and caption.startswith("sjd")
    from specviz.render.exports import export_run
    paths = export_run({"sjd": t}, {"sjd": np.asarray(img)}, PROMPT, root=tmp_path, cards=cards())
    assert all(p.exists() for p in paths) and Trace.load(next(p for p in paths if p.suffix == ".json")) == t


# -- bad input: one error line, nothing written ---------------------------------------------------------------------
class Payload:                                   # a pickle that carries code: unpickling would call os.system
    def __reduce__(self):
        import os
        return (os.system, ("touch /tmp/specviz-llamagen-pwned",))


def _bad(root, gpt_sd):
    path = root / "bad.pt"
    torch.save({"model": gpt_sd}, path) if isinstance(gpt_sd, dict) else torch.save(gpt_sd, path)
    return path


@pytest.mark.parametrize("case", ["missing", "extra", "shape", "c2i", "vq-as-gpt", "code"])
def test_bad_checkpoints_fail_with_one_line(ckpts, tmp_path, capsys, case):
    root = ckpts[0]
    sd = lt.gpt_weights(lt.tiny_gpt(), 0)
    if case == "missing":
        sd.pop("layers.1.feed_forward.w2.weight")
    elif case == "extra":
        sd["layers.0.attention.bias"] = torch.zeros(3)
    elif case == "shape":
        sd["layers.1.attention.wo.weight"] = torch.zeros(64, 32)
    elif case == "c2i":
        sd = {k: v for k, v in sd.items() if not k.startswith("cls_embedding.")}
        sd["cls_embedding.embedding_table.weight"] = torch.zeros(1001, 64)
    elif case == "vq-as-gpt":
        sd = lt.vq_weights(lt.tiny_vq(ch_mult=(1, 1)), 1)
    elif case == "code":
        sd = {"model": sd, "hook": Payload()}
    bad = _bad(tmp_path, sd)
    out = tmp_path / "out"
    rc = main(["convert", "llamagen", "--gpt", str(bad), "--vq", str(root / "t2i_tiny_vq.pt"), "--out", str(out),
               "--image-size", "8", "--n-head", "4"])
    err = capsys.readouterr().err
    want = {"missing": "1 missing keys: layers.1.feed_forward.w2.weight", "extra": "unexpected keys",
            "shape": "wrong shapes: layers.1.attention.wo.weight (64, 32) (expected (64, 64))",
            "c2i": "class-conditional (c2i)", "vq-as-gpt": "VQ tokenizer checkpoint",
            "code": "refused by torch.load(weights_only=True)"}[case]
    assert rc == 2 and err.count("\n") == 1 and err.startswith("error: ") and want in err, err
    assert not out.exists() and not list(tmp_path.glob(".out.part-*"))
    assert not Path("/tmp/specviz-llamagen-pwned").exists()


def test_wrong_family_directory_and_draft(ckpts, tmp_path, capsys):
    _, target, _ = ckpts
    (tmp_path / "config.json").write_text(json.dumps({"family": "lumina-mgpt"}))
    from specviz.models.llamagen import load_llamagen
    with pytest.raises(ValueError, match="not a converted LlamaGen one"):
        load_llamagen(tmp_path, "cpu")
    other = build(lt.tiny_gpt(grid=16, dim=32, n_layer=1, n_head=2), lt.tiny_vq(ch_mult=(1, 1)), 0, 1)
    with pytest.raises(ValueError, match="does not match"):
        drafter_factory(load_model(target, "cpu"), other)                           # 16x16 draft for a 4x4 target
    rc = main(["convert", "llamagen", "--gpt", "x.pt", "--vq", "y.pt", "--out", target])
    assert rc == 2 and "already exists" in capsys.readouterr().err
