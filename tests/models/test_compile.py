"""--compile: the padded fixed-shape forwards give the eager tokens, torch.compile gives them too (float32,
CPU), and where torch.compile cannot compile the CLI refuses in one line."""
from __future__ import annotations

import pytest
import torch

from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from specviz.models import base
from tests.support.toy import toy

CASES = {"ar": dict(method="ar"), "sjd": dict(method="sjd", window=5),
         "sd": dict(method="sd", tree_depth=3, tree_topk=3, tree_nodes=9),
         "cascade": dict(method="cascade", tree_depth=3, tree_topk=2, tree_nodes=6)}


def tokens(model, factory, seed: int, **kw) -> list[int]:
    return drain(decode(model, RunConfig(prompt="red house", seed=seed, **kw), factory)).trace.tokens


def test_padded_forwards_give_the_eager_tokens(monkeypatch):
    """compile() without the compiler (torch.compile as the identity): every forward padded to its bucket, the
    padding rows masked, decodes the very tokens and forward counts of the exact-shape eager model."""
    monkeypatch.setattr(base, "_PROBED", [True])
    monkeypatch.setattr(torch, "compile", lambda fn, **kw: fn)
    eager, factory = toy(codes=12, grid=3, seed=5)
    padded, _ = toy(codes=12, grid=3, seed=5)
    padded.compile()
    assert padded.compiled and padded.rows_for(5) == 8 and eager.rows_for(5) == 5
    for name, kw in CASES.items():
        for seed in (0, 1):
            assert tokens(padded, factory, seed, **kw) == tokens(eager, factory, seed, **kw), (name, seed)


def test_padding_rows_are_invisible():
    inner = torch.tensor([[1, 0], [1, 1]], dtype=torch.bool)
    m = base.static_mask(torch.tensor([True, False, True]), base.padded_inner(inner, 4), 9)
    want = torch.zeros(4, 9, dtype=torch.bool)
    want[:, [0, 2]] = True                                  # the committed prefix, as visible as it was
    want[0, 3] = want[1, 3] = want[1, 4] = True             # the fed rows: causal
    want[2, 5] = want[3, 6] = True                          # padding rows: themselves only
    assert torch.equal(m, want)
    assert [base.bucket(n) for n in (1, 2, 3, 16, 17, 25, 256)] == [1, 2, 4, 16, 32, 32, 256]
    with pytest.raises(ValueError, match="scratch rows"):
        base.bucket(257)


def test_compile_refuses_in_one_line_where_inductor_cannot(monkeypatch, capsys):
    from specviz.__main__ import main
    from specviz.models import _COMPILE

    def broken():
        raise RuntimeError("InductorError: no working C++ compiler\nsecond line")

    monkeypatch.setattr(base, "_PROBED", [])
    monkeypatch.setattr(base, "_probe_compile", broken)
    monkeypatch.setattr("specviz.models._COMPILE", [False])
    assert main(["generate", "--model", "scenes", "--method", "ar", "--compile"]) == 2
    err = capsys.readouterr().err
    assert err == ("error: --compile is unavailable: torch.compile cannot compile on this machine (RuntimeError: "
                   "InductorError: no working C++ compiler); run without --compile\n")
    assert _COMPILE == [False]


@pytest.mark.slow                                           # inductor compiles one graph per bucket: minutes on 2 cores
def test_torch_compile_gives_the_eager_tokens():
    base.check_compile()
    eager, factory = toy(codes=12, grid=3, seed=5)
    fast, _ = toy(codes=12, grid=3, seed=5)
    fast.compile()
    for name in ("ar", "sjd", "sd"):
        assert tokens(fast, factory, 0, **CASES[name]) == tokens(eager, factory, 0, **CASES[name]), name


def test_use_compile_and_load_model_compile_the_loaded_model(monkeypatch):
    from specviz import models

    class Fake:
        compiled = False

        def compile(self):
            self.compiled = True
            return self

    fake = models.Backend(name="fake", probe=lambda name: name.startswith("fake:"), load=lambda name, device: Fake())
    monkeypatch.setattr(models, "BACKENDS", (fake, *models.BACKENDS))
    monkeypatch.setattr(models, "_COMPILE", [False])
    monkeypatch.setattr(base, "_PROBED", [True])
    models.load_model.cache_clear()
    try:
        assert not models.load_model("fake:a", "cpu").compiled
        assert models.load_model("fake:a", "cpu", compile=True).compiled
        models.use_compile(True)
        assert models.load_model("fake:b", "cpu").compiled and not models.load_model("fake:b", "cpu", False).compiled
        models.use_compile(False)
        assert not models.load_model("fake:c", "cpu").compiled
    finally:
        models.load_model.cache_clear()


def test_the_app_refuses_compile_in_one_line_where_inductor_cannot(monkeypatch):
    import app

    def broken():
        raise RuntimeError("no working C++ compiler")

    monkeypatch.setattr(base, "_PROBED", [])
    monkeypatch.setattr(base, "_probe_compile", broken)
    with pytest.raises(SystemExit) as e:
        app.main(["--compile"])
    assert str(e.value) == ("error: --compile is unavailable: torch.compile cannot compile on this machine "
                            "(RuntimeError: no working C++ compiler); run without --compile")
