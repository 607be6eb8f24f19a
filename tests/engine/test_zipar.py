"""ZipAR (engine/zipar.py): the forward count equals the schedule's closed form 2W + (H - 2)·min(w, W) on scenes
grids (square, and non-square through a regridded tiny target) and on the tiny Janus, LlamaGen and Lumina-mGPT
backends; at w >= W it is AR token for token (keyed and papers noise); every decided token is fed (kept) exactly
once, in the forward after it was decided, and a new row's stand-in input is the newest token of the row two above,
never kept."""
from __future__ import annotations

import pytest
import torch

from specviz.engine import zipar
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from specviz.models.scenes import tiny
from tests.support.toy import CountingModel


class Regrid(CountingModel):
    """A tiny scenes target read as an (h, w) grid (h·w <= its own positions), forwards counted, every forward's
    feed and every commit recorded."""

    def __init__(self, h, w, codes=6, seed=0):
        side = 1
        while side * side < h * w:
            side += 1
        super().__init__(tiny(codes=codes, grid=side, seed=seed))
        self.grid, self.fed, self.kept = (h, w), [], []

    def forward(self, state, tokens, positions, tree_mask=None):
        self.fed.append((tokens.tolist(), positions.tolist(), None if tree_mask is None else tree_mask.clone()))
        return super().forward(state, tokens, positions, tree_mask)

    def commit(self, state, kept):
        self.kept.append(torch.as_tensor(kept).tolist())
        return self.m.commit(state, kept)


def _run(target, **kw):
    kw.setdefault("prompt", "red house")
    return drain(decode(target, RunConfig(**kw))).trace


@pytest.mark.parametrize("h,w_grid", [(1, 5), (2, 3), (3, 3), (4, 6), (6, 4), (5, 5)])
@pytest.mark.parametrize("w", [1, 2, 3, 8])
def test_forward_count_is_the_closed_form_on_scenes(h, w_grid, w):
    model = Regrid(h, w_grid)
    trace = _run(model, method="zipar", zipar_w=w)
    want = w_grid if h == 1 else 2 * w_grid + (h - 2) * min(w, w_grid)
    assert zipar.forwards(h, w_grid, w) == want
    assert model.calls == len(trace.steps) == trace.summary["target_forwards"] == want
    assert len(trace.tokens) == h * w_grid and trace.summary["tokens"] == h * w_grid


def test_closed_form_gives_the_papers_counts():
    """ZipAR's LlamaGen 24 x 24 at w = 8: 224 forwards (2.57x); Lumina-mGPT's 48 rows of 49 (EOL) at w = 16: 834."""
    assert zipar.forwards(24, 24, 8) == 224 and round(576 / 224, 2) == 2.57
    assert zipar.forwards(48, 49, 16) == 834


@pytest.mark.parametrize("noise", ["papers", "keyed"])
@pytest.mark.parametrize("h,w_grid,w", [(3, 3, 3), (4, 6, 6), (6, 4, 9), (5, 5, 64)])
def test_no_overlap_is_ar_token_for_token(noise, h, w_grid, w):
    z = _run(Regrid(h, w_grid), method="zipar", zipar_w=w, noise=noise, seed=3)
    a = _run(Regrid(h, w_grid), method="ar", noise=noise, seed=3)
    assert z.tokens == a.tokens
    assert [[e.p_target for e in s.events] for s in z.steps] == [[e.p_target for e in s.events] for s in a.steps]


def test_overlap_departs_from_ar_under_keyed_noise():
    """With rows overlapping a token misses context; on a 5 x 5 grid at w = 1 some token changes (so the test
    above is not vacuous)."""
    z = _run(Regrid(5, 5), method="zipar", zipar_w=1, noise="keyed")
    a = _run(Regrid(5, 5), method="ar", noise="keyed")
    assert z.tokens != a.tokens


def test_each_decided_token_is_fed_once_the_forward_after_and_stand_ins_are_never_kept():
    h, w_grid, w = 4, 6, 2
    model = Regrid(h, w_grid)
    trace = _run(model, method="zipar", zipar_w=w)
    decided_at = {pos: step for pos, (step, _) in trace.committing().items()}
    tok = dict(enumerate(trace.tokens))
    kept_at = {}
    for f, ((tokens, positions, mask), kept) in enumerate(zip(model.fed, model.kept), start=1):
        real = [decided_at[p] < f and tok[p] == t for t, p in zip(tokens, positions)]
        assert kept == [i for i, ok in enumerate(real) if ok]               # decided tokens kept, stand-ins not
        assert mask is not None and torch.equal(mask, torch.eye(len(real), dtype=torch.bool)
                                                | torch.tensor(real)[None, :])
        for i, (t, p) in enumerate(zip(tokens, positions)):
            if real[i]:
                assert p not in kept_at
                kept_at[p] = f
            else:                                                            # the stand-in at the end of row r - 1
                r = p // w_grid + 1
                assert p % w_grid == w_grid - 1 and r >= 2
                above = [q for q in range((r - 2) * w_grid, (r - 1) * w_grid) if decided_at[q] < f]
                assert t == tok[max(above)]
    assert kept_at == {p: s + 1 for p, s in decided_at.items() if p != h * w_grid - 1}
    assert sum(not k for k in (len(x) for x in model.kept)) == 0


def test_rows_start_as_the_schedule_says():
    """Row 0 by AR; row 1 once row 0 is complete; row r + 1 once row r has w tokens: column c of row r >= 1 is
    decided at forward W + (r - 1)·w + c."""
    h, w_grid, w = 4, 6, 2
    trace = _run(Regrid(h, w_grid), method="zipar", zipar_w=w)
    step = {pos: s for pos, (s, _) in trace.committing().items()}
    want = {r * w_grid + c: (c if r == 0 else w_grid + (r - 1) * w + c) for r in range(h) for c in range(w_grid)}
    assert step == want
    assert all(ev.decision == "ar" for _, ev in trace.events())


# ------------------------------------------------------------------------------------------------ the tiny backends
def _backend(kind, root):
    # imported here: the backends' tiny fixtures load transformers / tokenizers only for these tests
    from tests.support import llamagen_tiny as lt
    from tests.support.janus_tiny import tiny_pair
    from tests.support.lumina_tiny import make_tiny_lumina
    if kind == "janus":
        return tiny_pair(root)[0]
    if kind == "llamagen":
        return lt.converted_pair(root)[0]
    return str(make_tiny_lumina(root / "target", seed=0))


@pytest.fixture(scope="module", params=["janus", "llamagen", "lumina"])
def backend(request, tmp_path_factory):
    from specviz.models import load_model  # imported here: loads the backends' code only for these tests
    path = _backend(request.param, tmp_path_factory.mktemp(request.param))
    return path, load_model(path, "cpu")


def test_forward_count_and_no_overlap_on_the_tiny_backends(backend):
    path, model = backend
    h, w_grid = model.grid
    for w in (1, 2, 3):
        counting = CountingModel(model)
        trace = _run(counting, method="zipar", zipar_w=w, model=path, prompt="a red house")
        assert counting.calls == len(trace.steps) == zipar.forwards(h, w_grid, w) < h * w_grid
    for noise in ("papers", "keyed"):
        z = _run(model, method="zipar", zipar_w=w_grid, model=path, prompt="a red house", noise=noise, seed=1)
        a = _run(model, method="ar", model=path, prompt="a red house", noise=noise, seed=1)
        assert z.tokens == a.tokens
