"""Lumina-mGPT's guidance below 1 as its reference does it: Lumina-mGPT's CFG processor
(inference_solver.py) mixes u + s (c - u) for every scale except exactly 1.0, the unconditional context being the
image header alone. Pinned at cfg 0.5 against a direct computation: each row run on its own, from scratch, with
the model's plain causal attention (no shared cache, no padding, no masks of ours)."""
import pytest
import torch

from specviz.models import load_model
from tests.support.lumina_tiny import make_tiny_lumina

torch.set_num_threads(1)
PROMPT = "a red house"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return load_model(str(make_tiny_lumina(tmp_path_factory.mktemp("lumina") / "target", seed=0)), "cpu")


def direct_logits(model, seq: list[int]) -> torch.Tensor:
    """(len(seq), 8192) image-code logits of one sequence, alone, positions 0.. (the model's own causal mask)."""
    with torch.no_grad():
        ids = torch.tensor([seq])
        pos = torch.arange(len(seq))[None]
        h = model.lm(inputs_embeds=model.lm.embed_tokens(ids), position_ids=pos).last_hidden_state
        return (h[0] @ model.img_head.T).float()


def test_cfg_half_mixes_as_the_reference(model):
    s, w = 0.5, model.grid[1]
    cond, uncond = model.encode_prompt(PROMPT) + model.header(), model.header()
    codes = [7, 300, 4000, 12, 8191, 5, 99, 1234]                        # positions 0..7: crosses the row end at 5
    fed = []
    for p, c in enumerate(codes):
        fed.append(model._bpe[c])
        if p % w == w - 1:
            fed.append(model.ids["eol"])
    read = [len(cond) - 1] + [len(cond) + p + p // w + (p % w == w - 1) for p in range(len(codes))]
    c_log = direct_logits(model, cond + fed)[read]
    u_log = direct_logits(model, uncond + fed)[[i - len(cond) + len(uncond) for i in read]]
    want = s * (c_log - u_log) + u_log                                   # the reference's order of operations

    pf = model.prefill(PROMPT, s)
    got = [pf.logits]
    logits, _ = model.forward(pf.state, torch.tensor(codes), torch.arange(len(codes)))
    got = torch.cat([got[0][None], logits])
    assert (got - want).abs().max() <= 1e-4 * want.abs().max()
    assert (c_log - want).abs().max() > 0.1                              # the old law (conditional row only) differs


def test_exactly_one_runs_the_conditional_row_only(model):
    pf = model.prefill(PROMPT, 1.0)
    assert pf.state.rows == 1
    cond = model.encode_prompt(PROMPT) + model.header()
    assert (pf.logits - direct_logits(model, cond)[-1]).abs().max() <= 1e-4 * pf.logits.abs().max()
    assert model.prefill(PROMPT, 0.999).state.rows == 2 and model.prefill(PROMPT, 3.0).state.rows == 2
