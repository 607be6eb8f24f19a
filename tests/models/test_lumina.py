"""Lumina-mGPT: our backend against the reference numbers of scripts/pin_lumina.py (fixture), a tiny random
checkpoint in the released layout (tests/support/lumina_tiny.py: safetensors + Meta's VQGAN pickle, converted) through
the
CLI's `--model DIR` path for every registered method, CASCADE groups from its hidden states, the EOL-token raster in
trees, the maps / race / export on its 4x6 raster, and one-line errors for bad checkpoints."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

torch.set_num_threads(1)

from specviz.__main__ import main as cli  # noqa: E402
from specviz.core.records import COMMITTING  # noqa: E402
from specviz.core.trace import Trace  # noqa: E402
from specviz.engine.config import RunConfig  # noqa: E402
from specviz.engine.registry import METHODS  # noqa: E402
from specviz.models import load_model  # noqa: E402
from specviz.models.runner import run  # noqa: E402
from tests.support.lumina_tiny import make_tiny_lumina  # noqa: E402
from tests.support.toy import check_decisions  # noqa: E402

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "lumina_ref"
REF = json.loads(FIX.with_suffix(".json").read_text())
GRID, N_POS, PROMPT = (4, 6), 24, REF["prompt"]
TREE = {"sd", "cascade", "lantern", "lanternpp"}
SMALL = ["--window", "6", "--tree-depth", "3", "--tree-topk", "2", "--pac-width", "2", "--pac-depth", "2"]


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    root = tmp_path_factory.mktemp("lumina")
    return str(make_tiny_lumina(root / "target", seed=0)), str(make_tiny_lumina(root / "draft", seed=1))


@pytest.fixture(scope="module")
def model(paths):
    return load_model(paths[0], "cpu")


@pytest.fixture(scope="module")
def ref():
    from safetensors.torch import load_file
    return load_file(str(FIX) + ".safetensors")


def close(ours: torch.Tensor, theirs: torch.Tensor, rel: float = 1e-4) -> None:
    assert ours.shape == theirs.shape
    assert (ours.float() - theirs.float()).abs().max() <= rel * theirs.abs().max()


# -- pinned to the reference -----------------------------------------------------------------------------------------
def test_prefill_chunks_hidden_and_pixels_match_the_reference(model, ref):
    assert model.encode_prompt(PROMPT) == REF["prompt_ids"] and model.header() == REF["header"]
    pf = model.prefill(PROMPT, REF["cfg"])
    close(pf.logits, ref["prefill_logits"]), close(pf.hidden, ref["prefill_hidden"])
    st, rows, hid = pf.state, [], []
    for a, b in REF["chunks"]:                                      # each chunk crosses a row end (EOL inserted)
        lg, hd = model.forward(st, torch.tensor(REF["probe_codes"][a:b]), torch.arange(a, b))
        model.commit(st, torch.arange(b - a))
        rows.append(lg), hid.append(hd)
    lg = torch.cat(rows)
    close(lg[:, ref["cols"]], ref["chunk_logits_cols"]), close(torch.cat(hid), ref["chunk_hidden"])
    assert torch.equal(lg.argmax(1), ref["chunk_logits_argmax"])
    close(lg.logsumexp(1), ref["chunk_logits_lse"])
    close(model.decode_pixels(torch.tensor(REF["probe_codes"])), ref["pixels"])
    img = np.asarray(model.decode_image(torch.tensor(REF["greedy_codes"])))
    assert img.shape == (8, 12, 3) and np.array_equal(img, ref["image"].numpy())


def test_greedy_through_our_loop_reproduces_the_reference(paths):
    t = run(RunConfig(method="ar", model=paths[0], prompt=PROMPT, temperature=0.0, cfg=REF["cfg"]), device="cpu")
    assert t.tokens == REF["greedy_codes"]


@pytest.mark.parametrize("kw", [dict(method="sd", tree="static"), dict(method="sd", tree="chain"),
                                dict(method="sjd", window=7)], ids=lambda k: "-".join(map(str, k.values())))
def test_lossless_greedy_equals_ar(paths, model, kw):
    for cfg in (3.0, 1.0):
        ar = run(RunConfig(method="ar", model=paths[0], prompt=PROMPT, temperature=0.0, cfg=cfg), model=model).tokens
        got = run(RunConfig(model=paths[0], prompt=PROMPT, temperature=0.0, cfg=cfg, tree_depth=4, **kw),
                  model=model, draft_model=model)
        assert got.tokens == ar


def test_tree_forward_with_row_ends_equals_each_root_path(model):
    """A tree over a row end: every node's law equals the chain forward of its root path (EOLs inserted under the
    right parents); committing a tree path then continuing equals the chain."""
    codes = REF["probe_codes"]
    pf = model.prefill(PROMPT, 3.0)
    model.forward(pf.state, torch.tensor(codes[:4]), torch.arange(4))
    model.commit(pf.state, torch.arange(4))
    toks = [codes[4], 11, 12, 13, 14, 15]          # root@4; children 11, 12 @5 (row end); 13, 14 @6 under 12; 15 @6
    parents = [-1, 0, 0, 2, 2, 1]
    pos = [4, 5, 5, 6, 6, 6]
    anc = torch.eye(6, dtype=torch.bool)
    for i in range(6):
        j = parents[i]
        while j >= 0:
            anc[i, j], j = True, parents[j]
    base = pf.state.length
    lg, hd = model.forward(pf.state, torch.tensor(toks), torch.tensor(pos), anc)
    model.commit(pf.state, torch.tensor([0, 2, 4]))
    assert pf.state.length == base + 4                               # three tokens and the EOL after position 5
    nxt, _ = model.forward(pf.state, torch.tensor([16]), torch.tensor([7]))
    model.commit(pf.state, torch.tensor([0]))
    for i in range(6):
        path = [i]
        while parents[path[-1]] >= 0:
            path.append(parents[path[-1]])
        path = path[::-1]
        st = model.prefill(PROMPT, 3.0).state
        c, h = model.forward(st, torch.tensor(codes[:4] + [toks[k] for k in path]),
                             torch.tensor(list(range(4)) + [pos[k] for k in path]))
        close(lg[i], c[-1], 1e-5), close(hd[i], h[-1], 1e-5)
        model.commit(st, torch.arange(4 + len(path)))
        if i == 4:
            close(nxt[0], model.forward(st, torch.tensor([16]), torch.tensor([7]))[0][0], 1e-5)


# -- every method through the CLI, on the released layout ------------------------------------------------------------
def check_trace(t: Trace, method: str, path: str) -> None:
    commits = [e.pos for s in t.steps for e in s.events if e.decision in COMMITTING]
    assert sorted(commits) == list(range(N_POS))
    assert [e.token for _, (_, e) in sorted(t.committing().items())] == t.tokens
    assert len(t.tokens) == N_POS and all(0 <= x < 8192 for x in t.tokens)
    assert t.method == method and t.model == path and t.grid == list(GRID)
    for s in t.steps[1:]:
        assert sum(e.decision in COMMITTING for e in s.events) >= 1
        check_decisions(s.events)


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_through_the_cli(paths, tmp_path, capsys, method):
    args = ["generate", "--model", paths[0], "--method", method, "--prompt", PROMPT, "--device", "cpu", "--seed", "1",
            "--grid", "4x6", "--out", str(tmp_path / "x.png"), "--trace", str(tmp_path / "t.json"), *SMALL]
    if method in TREE:
        args += ["--draft-model", paths[1]]
    if method == "sjdpac":
        args[args.index("--window") + 1] = "8"
    assert cli(args) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    t = Trace.load(tmp_path / "t.json")
    assert t.summary == summary and summary["tokens"] == N_POS
    check_trace(t, method, paths[0])
    from PIL import Image
    with Image.open(tmp_path / "x.png") as im:
        assert im.size == (12, 8)                                   # 6 codes wide, 4 high, 2 px per code


def test_all_methods_covered():
    assert {"ar", "sjd", "mcsjd", "csd", "gsd", "sd", "cascade", "lantern", "lanternpp", "sjdpac", "zipar",
            "pjd"} == set(METHODS)


def test_cascade_groups_from_the_hidden_states(paths, model):
    grouped = 0
    for seed in range(2):
        t = run(RunConfig(method="cascade", model=paths[0], prompt=PROMPT, seed=seed, tree_depth=3, tree_topk=4,
                          tau_pos=0.0, tau_seq=0.0), model=model, draft_model=model)
        check_trace(t, "cascade", paths[0])
        grouped += sum(ev.groups is not None and bool(ev.groups.interchangeable or ev.groups.convergent)
                       for _, ev in t.events())
    assert grouped > 0


@pytest.mark.slow
def test_the_raster_draws_in_the_race_the_maps_and_an_export(paths, model, tmp_path):
    from specviz.analysis.cards import cards
    from specviz.analysis.views import MAPS, decided_mask
    from specviz.render import exports, panels
    traces = {m: run(RunConfig(method=m, model=paths[0], prompt=PROMPT, window=6), model=model)
              for m in ("ar", "csd")}
    images = {m: np.asarray(model.decode_image(torch.tensor(t.tokens))) for m, t in traces.items()}
    t = traces["csd"]
    frame = panels.race_frame(model.decode_image(torch.tensor(t.tokens)), decided_mask(t, 1), t.grid)
    assert frame.size == (240, 160)                                 # 40 px per code, 6 x 4 codes
    hatch = ~decided_mask(t, 1)
    assert hatch.shape == GRID and hatch.any()
    for kind in MAPS:
        assert panels.heatmap(kind, traces, images, cards=cards()).size[0] > 0
    paths_out = exports.export_run(traces, images, PROMPT, root=tmp_path, cards=cards())
    from PIL import Image
    with Image.open(next(p for p in paths_out if "_csd" in p.name and p.suffix == ".png")) as im:
        assert im.size == (480, 320)
        want = Image.fromarray(images["csd"]).resize((480, 320), Image.NEAREST)
        assert np.array_equal(np.asarray(im.convert("RGB")), np.asarray(want))


# -- loading the release, and one clear error line for bad input -----------------------------------------------------
def _variant(src: str, dst: Path, edit) -> str:
    from safetensors.torch import load_file, save_file
    shutil.copytree(src, dst)
    sd = load_file(str(dst / "model.safetensors"))
    edit(sd)
    save_file(sd, str(dst / "model.safetensors"))
    return str(dst)


def _one_line_error(capsys, args, *needles) -> None:
    assert cli(["generate", *args, "--device", "cpu", "--method", "ar"]) == 2
    err = capsys.readouterr()
    lines = err.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in err.err, err.err
    for n in needles:
        assert n in lines[0], lines[0]


def test_released_qk_norm_rows_are_expanded_per_head(model):
    from safetensors.torch import load_file
    sd = load_file(str(Path(model.name) / "model.safetensors"))
    rel = sd["model.layers.0.self_attn.k_norm.weight"]
    assert rel.shape == (1, 16)                                     # one row per model-parallel shard (released)
    ours = model.net.model.layers[0].self_attn.k_norm.weight
    assert ours.shape == (2, 16) and torch.equal(ours, rel.expand(2, 16))


@pytest.mark.parametrize("bad,needle", [
    ("missing", "weight(s) missing, e.g. 'lm_head.weight'"),
    ("extra", "unexpected weight(s), e.g. 'model.layers.9.mlp.up_proj.weight'"),
    ("shape", "'model.norm.weight' has shape (63,), expected (64,)"),
], ids=lambda v: v if v in ("missing", "extra", "shape") else "")
def test_bad_checkpoints_are_one_clear_line(paths, tmp_path, capsys, bad, needle):
    edits = {"missing": lambda sd: sd.pop("lm_head.weight"),
             "extra": lambda sd: sd.update({"model.layers.9.mlp.up_proj.weight": torch.zeros(2, 2)}),
             "shape": lambda sd: sd.update({"model.norm.weight": torch.ones(63)})}
    path = _variant(paths[0], tmp_path / bad, edits[bad])
    _one_line_error(capsys, ["--model", path], needle)


def test_wrong_family_missing_vqgan_and_unknown_resolution(paths, tmp_path, capsys):
    from specviz.models.lumina_load import load_lumina
    wrong = tmp_path / "janus"
    wrong.mkdir()
    (wrong / "config.json").write_text(json.dumps({"model_type": "janus"}))
    with pytest.raises(ValueError, match="model_type 'janus'.*'chameleon'"):
        load_lumina(str(wrong), "cpu")
    novq = shutil.copytree(paths[0], tmp_path / "novq")
    (novq / "vqgan.safetensors").unlink()
    _one_line_error(capsys, ["--model", str(novq)], "no converted VQGAN", "convert_vqgan")
    nores = shutil.copytree(paths[0], tmp_path / "nores")
    (nores / "specviz.json").unlink()
    _one_line_error(capsys, ["--model", str(nores)], "resolution is unknown", "specviz.json")
    assert cli(["generate", "--model", paths[0], "--draft-model", "scenes", "--method", "sd", "--device", "cpu"]) == 2
    assert "does not match" in capsys.readouterr().err
    _one_line_error(capsys, ["--model", "Alpha-VLLM/Lumina-mGPT-7B-768"], "hf download", "specviz convert lumina-vqgan")
    from specviz.models.lumina_load import grids_of
    for name, grids in (("Lumina-mGPT-7B-768-Omni", (24, 24)), ("Lumina-mGPT-34B-512", (16, 16))):
        (tmp_path / name).mkdir()
        assert grids_of(tmp_path / name) == grids


class _Code:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os
        return os.system, (f"touch {self.marker}",)


def test_vqgan_converter_refuses_code_and_writes_nothing_half(paths, tmp_path):
    from specviz.models.chameleon_vq import load_vqgan
    from specviz.models.convert import convert_vqgan
    src = Path(paths[0]) / "chameleon_tokenizer"
    out = convert_vqgan(src / "vqgan.ckpt", src / "vqgan.yaml", tmp_path / "ok")
    assert out.name == "vqgan.safetensors" and load_vqgan(tmp_path / "ok").quantize.embedding.weight.shape == (8192, 8)
    marker = tmp_path / "pwned"
    sd = torch.load(src / "vqgan.ckpt", weights_only=True)
    torch.save({**sd, "callback": _Code(marker)}, tmp_path / "evil.ckpt")
    with pytest.raises(ValueError, match=r"refused by torch.load\(weights_only=True\)"):
        convert_vqgan(tmp_path / "evil.ckpt", src / "vqgan.yaml", tmp_path / "evil")
    assert not marker.exists() and not (tmp_path / "evil").exists()
    sd["state_dict"]["decoder.conv_in.weight"] = torch.zeros(1)
    torch.save(sd, tmp_path / "shape.ckpt")
    with pytest.raises(ValueError, match="'decoder.conv_in.weight' has shape"):
        convert_vqgan(tmp_path / "shape.ckpt", src / "vqgan.yaml", tmp_path / "shape")
    assert not (tmp_path / "shape").exists()
    args = ["convert", "lumina-vqgan", "--yaml", str(src / "vqgan.yaml")]                 # the same through the CLI
    assert cli([*args, "--ckpt", str(src / "vqgan.ckpt"), "--out", str(tmp_path / "cli")]) == 0
    assert (tmp_path / "cli" / "vqgan.safetensors").exists()
    assert cli([*args, "--ckpt", str(tmp_path / "evil.ckpt"), "--out", str(tmp_path / "evil2")]) == 2
    assert not marker.exists() and not (tmp_path / "evil2").exists()


def test_the_app_backend_loads_a_lumina_directory_with_allow_paths(paths):
    """The app's own path rules (app/catalogue.py): a typed-in directory needs --allow-paths; the draft model
    must match."""
    from specviz.app.catalogue import check_draft, check_model, default_catalogue, load
    from specviz.core.knobs import ConfigError
    closed = default_catalogue("cpu")
    with pytest.raises(ConfigError, match="--allow-paths"):
        check_model(closed, paths[0])
    backend = default_catalogue("cpu", allow_paths=True, drafters=(paths[1],))
    model, factory = load(backend, check_model(backend, paths[0]), check_draft(backend, paths[1]))
    assert model.grid == GRID and model.codebook_size == 8192 and "draft model" in factory.label
