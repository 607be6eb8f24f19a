"""Janus backend (specviz/models/janus.py) on a complete tiny random checkpoint, loaded the way a user loads one.

The checkpoint (model + tokenizer + processor + chat template) is built offline and saved with save_pretrained
(docs/janus.md §9); every test goes through `load_janus(PATH)`. Tolerances: float32 on CPU, measured differences are
up to 5e-7 (hidden) and 5e-6 (guided logits of std ~2); the asserts allow 1e-5 for hidden states and 1e-4 for logits.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

torch.set_num_threads(1)

from specviz.models.janus import JanusModel, load_janus  # noqa: E402
from tests.support.janus_tiny import make_tiny_checkpoint  # noqa: E402

HIDDEN_TOL, LOGIT_TOL = 1e-5, 1e-4
PROMPT, CFG = "a red house", 3.0


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-janus")
    make_tiny_checkpoint(path)
    return path


@pytest.fixture(scope="module")
def jm(ckpt) -> JanusModel:
    return load_janus(str(ckpt), device="cpu")


def sequential(jm: JanusModel, tokens: list[int], cfg: float = CFG):
    """Prefill, then one single-token forward + commit per token -> laws (len+1, V) and hidden (len+1, h)."""
    pf = jm.prefill(PROMPT, cfg)
    logits, hidden = [pf.logits], [pf.hidden]
    for i, t in enumerate(tokens):
        lg, h = jm.forward(pf.state, torch.tensor([t]), torch.tensor([i]))
        jm.commit(pf.state, torch.tensor([0]))
        logits.append(lg[0])
        hidden.append(h[0])
    return torch.stack(logits), torch.stack(hidden)


def greedy(jm: JanusModel, cfg: float) -> list[int]:
    """Plain AR over the boundary with argmax: the oracle loop."""
    pf = jm.prefill(PROMPT, cfg)
    out = [int(pf.logits.argmax())]
    for i in range(jm.grid[0] * jm.grid[1] - 1):
        lg, _ = jm.forward(pf.state, torch.tensor(out[-1:]), torch.tensor([i]))
        jm.commit(pf.state, torch.tensor([0]))
        out.append(int(lg[0].argmax()))
    return out


def ancestors_mask(parents: list[int]) -> torch.Tensor:
    """(N, N) bool: node i sees itself and its ancestors."""
    n = len(parents)
    m = torch.zeros(n, n, dtype=torch.bool)
    for i in range(n):
        j = i
        while j >= 0:
            m[i, j] = True
            j = parents[j]
    return m


def close(a, b, tol):
    err = (a - b).abs().max().item()
    assert err <= tol, f"max abs difference {err:.3g} > {tol}"


def test_attributes_and_laws(jm):
    assert (jm.grid, jm.codebook_size, jm.hidden_size) == ((4, 4), 64, 32)
    assert "tiny-janus" in jm.name
    pf = jm.prefill(PROMPT, CFG)
    assert pf.logits.shape == (64,) and pf.logits.dtype == torch.float32
    assert pf.hidden.shape == (32,) and pf.hidden.dtype == torch.float32
    assert pf.state.rows == 2 and pf.state.length == pf.state.prefix == len(jm.encode_prompt(PROMPT))
    assert pf.logits.softmax(-1).max() > 0.2                         # peaked, not near-uniform


def test_prompt_is_image_mode_and_uncond_is_padded(jm):
    ids = jm.encode_prompt(PROMPT).tolist()
    assert ids[0] == 1 and ids[-1] == 4                              # BOS ... begin-of-image
    assert jm._uncond(torch.tensor(ids)).tolist() == [1] + [0] * (len(ids) - 2) + [4]


def test_chain_forward_equals_sequential(jm):
    tokens = [5, 17, 33, 2, 9, 60]
    ref_l, ref_h = sequential(jm, tokens)
    pf = jm.prefill(PROMPT, CFG)
    lg, h = jm.forward(pf.state, torch.tensor(tokens), torch.arange(6))
    close(h, ref_h[1:], HIDDEN_TOL)
    close(lg, ref_l[1:], LOGIT_TOL)
    # keep a prefix of the window (a partial acceptance), then continue: the cache must match AR exactly
    jm.commit(pf.state, torch.arange(3))
    assert pf.state.length == pf.state.prefix + 3 == pf.state.cache.get_seq_length()
    lg2, h2 = jm.forward(pf.state, torch.tensor([2]), torch.tensor([3]))
    jm.commit(pf.state, torch.tensor([0]))
    close(h2[0], ref_h[4], HIDDEN_TOL)
    close(lg2[0], ref_l[4], LOGIT_TOL)


def test_tree_forward_equals_paths_and_commit_compacts(jm):
    committed = [5, 17]
    pf = jm.prefill(PROMPT, CFG)
    jm.forward(pf.state, torch.tensor(committed), torch.arange(2))
    jm.commit(pf.state, torch.arange(2))
    tokens = torch.tensor([33, 40, 2, 9, 11, 60])                    # a flattened tree below position 1
    parents = [-1, 0, 0, 1, 2, 1]
    positions = torch.tensor([2, 3, 3, 4, 4, 4])
    lg, h = jm.forward(pf.state, tokens, positions, ancestors_mask(parents))
    for path in ([0, 1, 3], [0, 2, 4], [0, 1, 5]):
        ref_l, ref_h = sequential(jm, committed + tokens[path].tolist())
        close(h[path], ref_h[3:], HIDDEN_TOL)
        close(lg[path], ref_l[3:], LOGIT_TOL)
    jm.commit(pf.state, torch.tensor([0, 2, 4]))                     # keep the middle branch
    assert pf.state.cache.get_seq_length() == pf.state.prefix + 5
    lg2, h2 = jm.forward(pf.state, torch.tensor([7, 8]), torch.tensor([5, 6]))
    jm.commit(pf.state, torch.tensor([], dtype=torch.long))          # reject all: nothing kept
    ref_l, ref_h = sequential(jm, committed + [33, 2, 11, 7, 8])
    close(h2, ref_h[6:], HIDDEN_TOL)
    close(lg2, ref_l[6:], LOGIT_TOL)
    assert pf.state.cache.get_seq_length() == pf.state.prefix + 5


def test_forward_without_commit_is_refused(jm):
    pf = jm.prefill(PROMPT, CFG)
    jm.forward(pf.state, torch.tensor([1]), torch.tensor([0]))
    with pytest.raises(RuntimeError, match="commit"):
        jm.forward(pf.state, torch.tensor([2]), torch.tensor([1]))


def test_cfg_mixing_and_scale_one_is_conditional_only(jm):
    model = jm.model
    ids = jm.encode_prompt(PROMPT)[None]
    rows = torch.cat([ids, jm._uncond(ids)])
    with torch.no_grad():
        out = model.model.language_model(inputs_embeds=model.get_input_embeddings()(rows))
        c, u = model.model.generation_head(out.last_hidden_state[:, -1]).float()
    for s in (1.0, 0.5):
        pf = jm.prefill(PROMPT, s)
        assert pf.state.rows == 1
        close(pf.logits, c, LOGIT_TOL)
    close(jm.prefill(PROMPT, CFG).logits, u + CFG * (c - u), LOGIT_TOL)
    close(jm.prefill(PROMPT, CFG).hidden, out.last_hidden_state[0, -1], HIDDEN_TOL)
    cond_only, _ = sequential(jm, [3, 4, 5], cfg=1.0)
    with torch.no_grad():
        seq = torch.cat([model.get_input_embeddings()(ids),
                         model.prepare_embeddings_for_image_generation(torch.tensor([[3, 4, 5]]))], 1)
        h = model.model.language_model(inputs_embeds=seq).last_hidden_state[0, -4:]
    close(cond_only, model.model.generation_head(h).float(), LOGIT_TOL)


def test_greedy_matches_transformers_generate(jm):
    inputs = jm.processor(text=jm.processor.apply_chat_template(
        [{"role": "user", "content": [{"type": "text", "text": PROMPT}]}], add_generation_prompt=True),
        generation_mode="image", return_tensors="pt")
    ref = jm.model.generate(**inputs, generation_mode="image", do_sample=False, guidance_scale=CFG)
    assert ref.shape == (1, 16)
    assert greedy(jm, CFG) == ref[0].tolist()


def test_heads_and_codebook(jm):
    pf = jm.prefill(PROMPT, 1.0)
    close(jm.output_head(pf.hidden), pf.logits, LOGIT_TOL)
    emb = jm.embed_tokens(torch.tensor([3, 4]))
    assert emb.shape == (2, 32) and emb.dtype == torch.float32
    cv = jm.code_vectors()
    assert cv.shape == (64, 8)
    close(cv.norm(dim=1), torch.ones(64), 1e-5)


def test_decode_image(jm):
    codes = torch.arange(16) * 3
    img = jm.decode_image(codes)
    assert img.size == (8, 8) and img.mode == "RGB"
    with torch.no_grad():
        x = jm.model.decode_image_tokens(codes[None])[0]
    expect = ((x + 1) / 2 * 255).clamp(0, 255).round().to(torch.uint8)
    assert torch.equal(torch.from_numpy(np.array(img)), expect)


def test_missing_checkpoint_offline_is_clear(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("nobody/no-such-janus-model", str(tmp_path / "absent")):
        with pytest.raises(FileNotFoundError) as err:
            load_janus(name, device="cpu")
        msg = str(err.value)
        assert name in msg and "scenes" in msg and "local checkpoint directory" in msg and "network" in msg
    with pytest.raises(FileNotFoundError, match="HF_HUB_OFFLINE is set"):
        load_janus("nobody/no-such-janus-model", device="cpu")
    with pytest.raises(FileNotFoundError, match="not a complete checkpoint directory"):
        load_janus(str(tmp_path), device="cpu")                   # exists, but holds no checkpoint


def test_gpu_bench_tiny_smoke(tmp_path):
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location(
        "janus_gpu_bench", Path(__file__).resolve().parents[2] / "scripts" / "janus_gpu_bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = bench.main(["--tiny", "--json", str(tmp_path / "bench.json")])
    assert (tmp_path / "bench.json").exists()
    for label in ("cfg", "no_cfg"):
        assert out[label]["ar_ms"] > 0 and out[label]["verify_chain_over_ar"] > 0
    assert out["cfg"]["rows"] == 2 and out["no_cfg"]["rows"] == 1
