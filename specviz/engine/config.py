"""Run configuration: one frozen record, validated once at the edge. Its fields are the knobs of the registry
(knobs.COMMON plus every registered method's own, methods.py); field names equal the CLI flags (with underscores)
and the keys of a trace's `config` (docs/design.md §4-5)."""
from __future__ import annotations

from dataclasses import asdict, field, make_dataclass

from specviz.core.knobs import MAX_PROMPT, ConfigError
from specviz.engine import registry


def _validate(self) -> None:
    if self.method not in registry.REGISTRY:
        raise ConfigError(f"--method must be one of {', '.join(registry.REGISTRY)}; got {self.method!r}")
    for k, v in registry.REGISTRY[self.method].forces.items():      # e.g. mcsjd always couples: the record says so
        object.__setattr__(self, k, v)
    for k in registry.all_knobs():
        if k.name not in ("method", "prompt"):
            k.check(getattr(self, k.name))
    if not isinstance(self.prompt, str) or not self.prompt.strip():
        raise ConfigError("--prompt must be a non-empty text")
    if len(self.prompt) > MAX_PROMPT:
        raise ConfigError(f"--prompt is {len(self.prompt)} characters; the limit is {MAX_PROMPT}")
    for m in registry.REGISTRY.values():
        problem = m.check(registry.KnobValues(asdict(self))) if m.check is not None and m.name == self.method else None
        if problem:
            raise ConfigError(problem)


def build() -> type:
    """The RunConfig class for the knobs registered now (rebuilt by tests that register a method with new knobs)."""
    return make_dataclass(
        "RunConfig", [(k.name, k.kind, field(default=k.default)) for k in registry.all_knobs()], frozen=True,
        bases=(registry.RunConfigBase,),
        namespace={"__post_init__": _validate, "__module__": __name__,
                   "__doc__": "Every knob of a run (see knobs.py / methods.py for ranges, labels and help)."})


RunConfig = build()
