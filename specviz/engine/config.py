"""Run configuration: one frozen record, validated once at the edge. Its fields are the knobs of the registry
(knobs.COMMON plus every registered method's own, methods.py); field names equal the CLI flags (with underscores)
and the keys of a trace's `config` (docs/design.md §4-5)."""
from __future__ import annotations

from dataclasses import asdict, field, make_dataclass

from specviz.core.knobs import MAX_PROMPT, ConfigError  # noqa: F401  (re-exported)
from specviz.engine import methods
from specviz.engine.methods import METHODS  # noqa: F401  (re-exported: a live view of the registered names)


def _validate(self) -> None:
    if self.method not in methods.REGISTRY:
        raise ConfigError(f"--method must be one of {', '.join(methods.REGISTRY)}; got {self.method!r}")
    for k, v in methods.REGISTRY[self.method].forces.items():      # e.g. mcsjd always couples: the record says so
        object.__setattr__(self, k, v)
    for k in methods.all_knobs():
        if k.name not in ("method", "prompt"):
            k.check(getattr(self, k.name))
    if not isinstance(self.prompt, str) or not self.prompt.strip():
        raise ConfigError("--prompt must be a non-empty text")
    if len(self.prompt) > MAX_PROMPT:
        raise ConfigError(f"--prompt is {len(self.prompt)} characters; the limit is {MAX_PROMPT}")
    for m in methods.REGISTRY.values():
        problem = m.check(methods.KnobValues(asdict(self))) if m.check is not None and m.name == self.method else None
        if problem:
            raise ConfigError(problem)


def build() -> type:
    """The RunConfig class for the knobs registered now (rebuilt by tests that register a method with new knobs)."""
    return make_dataclass(
        "RunConfig", [(k.name, k.kind, field(default=k.default)) for k in methods.all_knobs()], frozen=True,
        bases=(methods.RunConfigBase,),
        namespace={"__post_init__": _validate, "__module__": __name__,
                   "__doc__": "Every knob of a run (see knobs.py / methods.py for ranges, labels and help)."})


RunConfig = build()
