"""The method registry: the Method record, `register`, `get`, and the knob lists derived from the records.

A method is a drafter family (none, Jacobi window, draft tree — families.py), an acceptance rule (rules.py), and for
CASCADE a group builder (groups.py). Its record also carries its own knobs, a one-line description, whether it is
lossless, how the instant preview re-scores its recorded drafts, and what it adds to the views (its inspector line,
its groups). Everything else derives from the records: RunConfig's fields and validation, the CLI flags, the app's
method list, controls and lane headers, the sweep tab, the preview, the trace checks and the bench's spec parser.
The records themselves are the catalogue (methods.py): adding a method = a rule function (and/or a family) + one
`register`, and nothing outside the catalogue asks for a method by name.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Callable

from specviz.core.knobs import COMMON, Knob
from specviz.core.records import DECISIONS
from specviz.engine import rules


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A paper's claim about where its method acts, checked on the atlas (analysis/atlas.claims): the share `part`
    of the method's acting tokens in some place against the share `base` of all tokens there, checked when the
    method acted at all (`gate`). `higher`: the claim is part > base (else part < base)."""
    key: str                                     # the claim's name in the atlas's output
    text: str                                    # the claim in words
    part: str                                    # headline column: the share of the acting tokens
    base: str                                    # headline column: the share of all tokens
    gate: str                                    # headline column that is 0 when the method did not act
    where: str                                   # where the shares are counted, in words
    higher: bool = True


@dataclass(frozen=True, kw_only=True)
class Method:
    """One method's record, built by keyword (methods.py: `register(Method(name=..., label=..., ...))`)."""
    name: str
    label: str                                   # lane title in the app
    family: type                                 # families.AR | families.Jacobi | families.TreeFamily | a Family
    summary: str                                 # one line under the lane title
    lossless: bool
    rule_knobs: tuple = ()                       # names of the knobs its rule reads (sweep tab, inspector reading)
    declares: tuple = ()                         # Knob records this method introduces
    rule: Callable | None = None                 # (cfg, model) -> accept_fn(q (L,V), p (L,V)) -> a (L,V)
    groups: Callable | None = None               # (tree, hidden (N,h), cfg) -> group_fn (CASCADE): the method forms
    #                                              groups, its events carry the `groups` extension, the maps draw them
    rescore: Callable | None = None              # (judged events of one step, KnobValues) -> [b'] (preview)
    check: Callable | None = None                # (KnobValues) -> error text or None, for combinations of knobs
    reading: str = ""                            # which reading of the paper runs, in which units
    bound: Callable | None = None                # (judged TokenEvent, KnobValues) -> the rule's promised per-draft
    #                                              TV cost
    forces: dict = field(default_factory=dict)   # knob -> value this method always runs with (set in the config)
    explain: Callable | None = None              # (config dict, deciding TokenEvent) -> a line of plain text the
    #                                              inspector shows under the numbers (CSD: its units; CASCADE: budget)
    group_reading: Callable | None = None        # (config dict) -> how this run formed its groups (inspector, maps)
    relaxation: str = ""                         # what the rule adds to q/p, in words (the inspector's verdict)
    claims: tuple = ()                           # Claim records: what its paper says of where it acts (the atlas)

    @property
    def decisions(self) -> frozenset:
        """Decisions a run of this method may record after the prefill."""
        if not self.family.drafts:
            return frozenset({"ar"})
        return frozenset(DECISIONS) - {"ar"} - ({"relaxed"} if self.lossless else set())

    def accept_fn(self, cfg, model):
        return rules.lossless if self.rule is None else self.rule(cfg, model)


REGISTRY: dict[str, Method] = {}


def register(m: Method) -> Method:
    """Add (or replace) a method; its knobs join RunConfig's (a new knob needs a new RunConfig: config.build())."""
    taken = {k.name: k for k in all_knobs()}
    for k in m.declares:
        if k.name in taken and taken[k.name] != k and not (m.name in REGISTRY and k in REGISTRY[m.name].declares):
            raise ValueError(f"knob {k.name!r} of {m.name} is already declared differently")
    REGISTRY[m.name] = m
    return m


def get(name: str) -> Method:
    return REGISTRY[name]


def all_knobs() -> tuple[Knob, ...]:
    """Common knobs, then each registered method's own, each once, in declaration order."""
    out, seen = [], set()
    for k in COMMON + tuple(k for m in REGISTRY.values() for k in m.declares):
        if k.name not in seen:
            out.append(k)
            seen.add(k.name)
    return tuple(out)


def knob(name: str) -> Knob:
    return next(k for k in all_knobs() if k.name == name)


def ui_knobs(where: str | None = None) -> tuple[Knob, ...]:
    """Knobs the app shows as controls ("setup": above the sliders, not previewed; "main": beside the methods,
    previewed; "advanced": the accordion)."""
    return tuple(k for k in all_knobs() if k.ui and (where is None or k.ui == where))


class Recomputed(Sequence):
    """A tuple recomputed on every use from the registry (so names registered later, e.g. by a test, appear in
    every list derived from it)."""

    def __init__(self, make: Callable[[], tuple]):
        self.make = make

    def __getitem__(self, i):
        return self.make()[i]

    def __len__(self):
        return len(self.make())

    def __iter__(self):                     # one make() per pass (Sequence's default indexes item by item)
        return iter(self.make())

    def index(self, value, *args):
        return self.make().index(value, *args)

    def __repr__(self):
        return repr(self.make())


METHODS = Recomputed(lambda: tuple(REGISTRY))


class RunConfigBase:
    """What every RunConfig is (config.build makes it a frozen dataclass with one field per registered knob),
    declared here so that the engine's records can name its type: the knob values by attribute, by name
    (`to_dict` / `from_dict`) and the guidance scale under its own name."""

    @property
    def cfg_scale(self) -> float:
        """The classifier-free guidance scale (the knob keeps its public name `cfg`: --cfg, the API's cfg=, the
        trace's config key)."""
        return self.cfg

    def to_dict(self) -> dict:
        """The fields by name; a `quiet` knob at its default is left out (from_dict restores it)."""
        quiet = {k.name: k.default for k in all_knobs() if k.quiet}
        return {k: v for k, v in asdict(self).items() if not (k in quiet and v == quiet[k])}

    @classmethod
    def from_dict(cls, d: dict):
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


class KnobValues(dict):
    """A run's knob values as every hook of a Method record takes them: registry defaults, then the run's config,
    then any moved knobs (attribute access: knobs.lam)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def budget(self) -> float:
        return self.get("cascade_budget", math.inf)

    @classmethod
    def from_config(cls, config: dict, **over) -> "KnobValues":
        """Registry defaults, then the run's config, then the moved knobs (None = not moved)."""
        base = {k.name: k.default for k in all_knobs()} | dict(config)
        return cls(base | {k: v for k, v in over.items() if v is not None})
