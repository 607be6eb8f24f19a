"""Every method under both noises keeps the model's laws on the model's device: decode() on the stub target under
tests/support/fakedevice.OnDevice (the model's outputs tagged as device tensors) makes no operation that CUDA refuses
for mixing devices (a device tensor beside a host tensor of one or more dimensions, or a host generator drawing on
the device). No GPU is needed to find what the first GPU run would have crashed on."""
import pytest
import torch

from specviz.core import noise as noise_mod
from specviz.engine import registry
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode
from specviz.engine.drafters.model import ModelDrafter
from specviz.engine.drafters.protocols import DrafterFactory
from specviz.engine.stub import StubTarget, stub_factory
from specviz.models.scenes import tiny
from tests.support.fakedevice import OnDevice
from tests.support.toy import head_factory, toy_head


class DeviceStub(StubTarget):
    """The stub target whose outputs are tagged as living on the model's device (its forward itself is the
    backend's business and is not checked: it takes host tokens and positions by contract)."""

    def __init__(self, mode: OnDevice, *a, **kw):
        super().__init__(*a, **kw)
        self.mode, self.device = mode, mode.device()

    def prefill(self, prompt, cfg_scale):
        with self.mode.paused():
            out = super().prefill(prompt, cfg_scale)
        self.mode.mark(out.logits, out.hidden)
        return out

    def forward(self, state, tokens, positions, tree_mask=None):
        with self.mode.paused():
            out = super().forward(state, tokens, positions, tree_mask)
        self.mode.mark(*out)
        return out


def drain(mode: OnDevice, model, cfg: RunConfig, factory, steps: int) -> list:
    """Up to `steps` verification steps of decode() under `mode`: the refused mixes."""
    with mode:
        gen = decode(model, cfg, factory)
        for _ in range(steps):
            try:
                next(gen)
            except StopIteration:
                break
    return mode.mixes


def fresh_mode() -> OnDevice:
    noise_mod._CODES.clear()          # per-device tables kept across runs were made outside this run's mode
    return OnDevice()


def mixes(method: str, noise: str, steps: int = 6, model: dict | None = None, **over) -> list:
    mode = fresh_mode()
    stub = DeviceStub(mode, 64, (6, 6), **{"dims": 8, "seed": 0, **(model or {})})
    return drain(mode, stub, RunConfig(method=method, prompt="stub", seed=0, noise=noise, **over), stub_factory, steps)


@pytest.mark.parametrize("noise", ["papers", "keyed"])
@pytest.mark.parametrize("method", list(registry.METHODS))
def test_no_step_mixes_devices(method, noise):
    assert mixes(method, noise) == []


VARIANTS = {   # the other paths a knob opens (RunConfig overrides), each under both noises
    "sd-static-sampled": dict(method="sd", tree="static", tree_sampling="sample"),
    "sd-chain": dict(method="sd", tree="chain"),
    "cascade-siblings": dict(method="cascade", cascade_sets="siblings", cascade_budget=0.05),
    "gsd-released": dict(method="gsd", gsd_mode="released"),
    "gsd-released-wide": dict(method="gsd", gsd_mode="released", model={"hidden": 160}),   # its banded distances
    "gsd-wide": dict(method="gsd", model={"dims": 160}),
    "lantern-lumina": dict(method="lantern", lantern_residual="lumina"),
    "lanternpp-llamagen": dict(method="lanternpp", lantern_residual="llamagen"),
    "csd-vocab-1-h": dict(method="csd", h_norm="vocab", g="one_minus_h", couple=1),
    "sjd-repeat": dict(method="sjd", init="repeat_horizon"),
    "sjd-top-k-p": dict(method="sjd", top_k=20, top_p=0.9, temperature=0.8),
    "ar-greedy": dict(method="ar", temperature=0.0),
}


@pytest.mark.parametrize("noise", ["papers", "keyed"])
@pytest.mark.parametrize("case", list(VARIANTS))
def test_no_variant_mixes_devices(case, noise):
    over = dict(VARIANTS[case])
    assert mixes(over.pop("method"), noise, **over) == []


def test_a_host_tensor_beside_the_laws_is_found(monkeypatch):
    """The check itself: a rule that meets the laws with a host tensor (the uniforms not moved where q lives) is
    refused where it happens."""
    from specviz.core import sampling
    real = sampling.draw
    monkeypatch.setattr(sampling, "draw", lambda law, u: real(law, u.clone()) if u.dim() == 0 else
                        torch.searchsorted(law.cumsum(-1), torch.rand(u.shape)[..., None]).squeeze(-1))
    assert any(op == "searchsorted" for op, _ in mixes("sjd", "papers"))


class OnModelDevice:
    """A backend (the scenes toy) seen from the engine with everything it returns on the model's device; its own
    work (the forward, the KV cache) is the backend's business and is not checked."""
    BACKEND = ("prefill", "forward", "commit", "embed_tokens", "output_head", "code_vectors")

    def __init__(self, model, mode: OnDevice):
        self._m, self._mode, self.device = model, mode, mode.device()

    def __getattr__(self, name):
        got = getattr(self._m, name)
        if name not in self.BACKEND:
            return got

        def call(*a, **kw):
            with self._mode.paused():
                out = got(*a, **kw)
            self._mode.mark(*(vars(out).values() if hasattr(out, "__dataclass_fields__") else
                              out if isinstance(out, tuple) else (out,)))
            return out
        return call


@pytest.mark.parametrize("noise", ["papers", "keyed"])
@pytest.mark.parametrize("method", [m for m in registry.METHODS if registry.get(m).family.needs_drafter])
def test_the_eagle_head_drafter_keeps_to_the_device(method, noise):
    """The tree methods with the scenes toy's EAGLE head (drafters/tree.HeadDrafter): its weights on the model's
    device with the target's, every draft law and tree made from them stays there."""
    mode = fresh_mode()
    model = tiny(codes=3, grid=2, seed=0, sharpen=3.0)
    head = toy_head(model, 2)
    mode.mark(*head.parameters())                              # the head's weights: on the model's device
    cfg = RunConfig(method=method, prompt="red house", seed=0, noise=noise)
    assert drain(mode, OnModelDevice(model, mode), cfg, head_factory(head), 4) == []


def tree_kids_stay_on_device():
    """The mutation check's detector (tests/mutation/mutants_device.py): the point-mass tree methods."""
    for method in ("sd", "cascade"):
        assert mixes(method, "papers") == []


def lantern_stays_on_device():
    """The mutation check's detector: LANTERN with its neighbour table and its released residual."""
    assert mixes("lantern", "papers") == []
    assert mixes("lantern", "papers", lantern_residual="lumina") == []


def gsd_stays_on_device():
    """The mutation check's detector: GSD's per-cell path and its released reading."""
    assert mixes("gsd", "papers") == []
    assert mixes("gsd", "papers", gsd_mode="released", model={"hidden": 160}) == []


@pytest.mark.parametrize("noise", ["papers", "keyed"])
@pytest.mark.parametrize("drafter,sampling", [("head", "sample"), ("model", "topk"), ("model", "sample")])
def test_tree_drafters_keep_to_the_device(drafter, sampling, noise):
    """SD's sampled trees (EAGLE-1, exact by P3) from the EAGLE head, and a draft model's trees (drafters/model.py,
    e.g. Janus-Pro-1B for 7B) point-mass and sampled: the kid laws meet the target's laws on its device; the papers'
    draws without replacement happen on the host, where their generator is."""
    mode = fresh_mode()
    model = tiny(codes=3, grid=2, seed=0, sharpen=3.0)
    if drafter == "head":
        head = toy_head(model, 2)
        mode.mark(*head.parameters())
        factory = head_factory(head)
    else:
        draft = OnModelDevice(tiny(codes=3, grid=2, seed=1, sharpen=3.0), mode)
        factory = DrafterFactory(lambda m, cfg, rnd: ModelDrafter(draft, cfg, rnd), "")
    cfg = RunConfig(method="sd", prompt="red house", seed=0, noise=noise, tree_sampling=sampling)
    assert drain(mode, OnModelDevice(model, mode), cfg, factory, 4) == []
