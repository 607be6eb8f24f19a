"""A request resolved: `resolve` turns the app's inputs into the model, its drafter factory and one validated
RunConfig per selected method (the model and draft model checked against the catalogue, then loaded)."""
from __future__ import annotations

from specviz.app.catalogue import Catalogue, check_draft, check_model, load
from specviz.core.knobs import ConfigError
from specviz.engine import families, registry
from specviz.engine.config import RunConfig
from specviz.engine.registry import METHODS
from specviz.models import offers_own_drafter


def resolve(catalogue: Catalogue, inputs: dict) -> tuple:
    """{model, methods, draft_model, prompt, seed, the knobs...} -> (model, drafter factory, configs): every check
    before any loading (a wrong knob costs no model load)."""
    knobs = dict(inputs)
    name = check_model(catalogue, knobs.pop("model") or "")
    chosen = knobs.pop("methods")
    knobs["draft_model"] = default_draft(catalogue, name, check_draft(catalogue, knobs.get("draft_model", "")), chosen)
    cfgs = make_configs(chosen, model=name, **_typed(knobs))
    model, factory = load(catalogue, name, knobs["draft_model"])
    return model, factory, cfgs


def default_draft(catalogue: Catalogue, model: str, draft: str, chosen) -> str:
    """The draft model a run uses: the caller's choice (`draft`, checked); else, when tree methods run on a model
    without a drafter of its own (its backend's row says: models.offers_own_drafter) and the app offers exactly one
    draft model, that one."""
    needs = any(m in registry.REGISTRY and registry.get(m).family.needs_drafter for m in (chosen or []))
    if draft or not needs or len(catalogue.drafters) != 1 or offers_own_drafter(model):
        return draft
    return catalogue.drafters[0]


def make_configs(methods, **knobs) -> list[RunConfig]:
    """One validated RunConfig per selected method (same seed and knobs), in the canonical METHODS order. A method
    that drafts no tree gets no draft model: each config (and so each trace) names the drafter that actually ran."""
    chosen = [m for m in METHODS if m in (methods or [])]
    if not chosen:
        raise ConfigError("choose at least one method to compare")
    return [RunConfig(method=m, **_drafted(m, knobs)) for m in chosen]


def _typed(knobs: dict) -> dict:
    """UI numbers arrive as floats: cast each knob to its registry kind (validation happens in RunConfig)."""
    out = dict(knobs)
    for name, v in knobs.items():
        if name == "prompt":
            continue
        k = registry.knob(name)
        if v is None and k.kind is not str:
            raise ConfigError(f"{name} is empty; enter {'a whole number' if k.kind is int else 'a number'}")
        out[name] = k.cast(v)
    out["prompt"] = (out.get("prompt") or "").strip()
    return out


def _drafted(method: str, knobs: dict) -> dict:
    return knobs if registry.get(method).family.needs_drafter else {**knobs, "draft_model": ""}


def tree_methods() -> tuple:
    """The methods that draft with the Drafter control's choice (their family needs a tree drafter), METHODS order."""
    return tuple(m for m in METHODS if registry.get(m).family.needs_drafter)


def families_line() -> str:
    """'Jacobi: sjd, csd, gsd · draft tree: sd, cascade, lantern' from the registry (the Methods control's info)."""
    names = {families.Jacobi: "Jacobi", families.TreeFamily: "draft tree"}
    groups: dict = {}
    for m in METHODS:
        fam = next((n for f, n in names.items() if issubclass(registry.get(m).family, f)), None)
        if fam:
            groups.setdefault(fam, []).append(m)
    return " · ".join(f"{fam}: {', '.join(ms)}" for fam, ms in groups.items())
