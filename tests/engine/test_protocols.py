"""Every drafter, drafter factory and model backend satisfies the Protocol it is declared against
(engine/drafters/protocols.py, engine/target.py): each required method exists with the Protocol's parameters (same
names, same kinds, in order; extra parameters only with defaults), and each required attribute is set. A
`runtime_checkable` isinstance check would only see the method names."""
from __future__ import annotations

import inspect

import pytest

from specviz.engine import stub
from specviz.engine.drafters import drafter_factory
from specviz.engine.drafters.jacobi import JacobiDrafter
from specviz.engine.drafters.model import ModelDrafter
from specviz.engine.drafters.pac import PACDrafter
from specviz.engine.drafters.protocols import ChainDrafter, DrafterFactory, ProactiveDrafter, TreeDrafter
from specviz.engine.drafters.tree import HeadDrafter
from specviz.engine.target import Model
from specviz.models.janus import JanusModel
from specviz.models.llamagen import LlamaGenModel
from specviz.models.lumina import LuminaModel
from specviz.models.scenes import ScenesModel, tiny
from tests.support.toy import CountingModel, toy

P = inspect.Parameter


def required(proto) -> tuple[dict, set]:
    """The Protocol's methods (name -> function) and attribute names, its bases' included."""
    fns, attrs = {}, set()
    for cls in reversed(proto.__mro__):
        if cls is object or not getattr(cls, "_is_protocol", False) or cls.__name__ == "Protocol":
            continue
        fns |= {n: f for n, f in vars(cls).items() if inspect.isfunction(f) and (n == "__call__" or n[0] != "_")}
        attrs |= set(getattr(cls, "__annotations__", {}))
    return fns, attrs


def mismatches(impl, proto) -> list[str]:
    """What `impl` (a class or an object) lacks of `proto`, in words; [] when it conforms."""
    fns, attrs = required(proto)
    out = []
    for name, want in fns.items():
        got = getattr(impl, name, None)
        if got is None or not callable(got):
            out.append(f"no {name}")
            continue
        w = [p for p in inspect.signature(want).parameters.values() if p.name != "self"]
        g = [p for p in inspect.signature(got).parameters.values() if p.name != "self"]
        if any(p.kind == P.VAR_POSITIONAL for p in g) and any(p.kind == P.VAR_KEYWORD for p in g):
            continue                                    # (*args, **kw): takes whatever the Protocol passes
        head, extra = g[:len(w)], g[len(w):]
        if [(p.name, p.kind) for p in head] != [(p.name, p.kind) for p in w]:
            out.append(f"{name}{inspect.signature(got)} is not {name}{inspect.signature(want)}")
        elif any(p.default is P.empty and q.default is not P.empty for p, q in zip(head, w)):
            out.append(f"{name}: a parameter with a default in the Protocol has none")
        elif any(p.default is P.empty and p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD) for p in extra):
            out.append(f"{name}: extra parameters without defaults")
    for a in sorted(attrs):
        source = inspect.getsource(impl if inspect.isclass(impl) else type(impl))
        if not (hasattr(impl, a) or f"self.{a} =" in source or f"self.{a}, " in source):
            out.append(f"no attribute {a}")
    return out


BACKENDS = [ScenesModel, JanusModel, LlamaGenModel, LuminaModel, stub.StubTarget]


CASES = [(JacobiDrafter, ChainDrafter), (HeadDrafter, TreeDrafter), (ModelDrafter, TreeDrafter),
         (stub.StubTreeDrafter, TreeDrafter), (PACDrafter, ProactiveDrafter), *((cls, Model) for cls in BACKENDS)]


@pytest.mark.parametrize("impl,proto", CASES, ids=lambda x: getattr(x, "__name__", ""))
def test_class_conforms(impl, proto):
    assert mismatches(impl, proto) == []


def every_class_conforms():
    """All CASES at once (the mutation check's detector)."""
    assert {impl.__name__: mismatches(impl, proto) for impl, proto in CASES} == {impl.__name__: [] for impl, _ in CASES}


def test_tiny_models_and_factories_conform():
    """The tiny models the tests decode with, and every factory a caller gets (drafter_factory's, the stub's, the
    toy.s; the tiny model has no head of its own), by instance: attributes set in __init__ count."""
    model, factory = toy()
    for m in (tiny(), model, CountingModel(model), stub.StubTarget(16, (2, 2))):
        assert mismatches(m, Model) == [], type(m).__name__
    for f in (factory, drafter_factory(model, tiny(codes=3, grid=2, seed=5)),
              stub.stub_factory):
        assert isinstance(f, DrafterFactory) and isinstance(f.label, str) and callable(f.make)


def test_the_check_sees_a_mismatch():
    """The checker itself: PAC's drafter is not a TreeDrafter (no observe), a drafter with a renamed parameter, an extra
    required one or a missing attribute is caught."""
    class Renamed:
        def build(self, token: int, root_pos: int): ...
        def observe(self, tokens, positions, features=None): ...

    class NoDefault:
        def build(self, root_token, root_pos): ...
        def observe(self, tokens, positions, features, more): ...

    assert mismatches(PACDrafter, TreeDrafter) == ["no observe"]
    assert mismatches(Renamed, TreeDrafter)[0].startswith("build(")
    assert mismatches(NoDefault, TreeDrafter) == ["observe: extra parameters without defaults"]
    with pytest.raises(TypeError):                  # a drafter factory without its label is refused when made
        DrafterFactory(lambda model, cfg, rnd: None)
