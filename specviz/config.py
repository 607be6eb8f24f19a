"""Run configuration: one frozen record, validated once at the edge. Field names equal the CLI flags (with
underscores) and the keys of a trace's `config` (design.md §4-5)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

METHODS = ("ar", "sjd", "csd", "gsd", "sd", "cascade", "lantern")
JACOBI_METHODS = ("sjd", "csd", "gsd")
TREE_METHODS = ("sd", "cascade", "lantern")
MAX_PROMPT = 500


class ConfigError(ValueError):
    """A bad knob value; the message names the fix."""


@dataclass(frozen=True)
class RunConfig:
    method: str = "ar"
    model: str = "scenes"
    prompt: str = "a red house on the left, a sunset sky over snow"
    seed: int = 0
    # sampling (design.md §1.2 order: CFG mix, temperature, top-k, top-p)
    temperature: float = 1.0            # 0 = greedy
    top_k: int = 0                      # 0 = off
    top_p: float = 1.0
    cfg: float = 3.0                    # 1 = no guidance
    # Jacobi drafting (sjd / csd / gsd)
    window: int = 16
    init: str = "random"                # random | repeat_horizon | repeat_vertical
    # tree drafting (sd / cascade / lantern)
    tree: str = "dynamic"               # dynamic | static | chain
    tree_depth: int = 4
    tree_topk: int = 4
    tree_nodes: int = 24
    tree_sampling: str = "topk"         # topk (point masses) | sample (EAGLE-1, without replacement)
    # csd
    lam: float = 4.0                    # defaults chosen by scripts/choose_defaults.py (README)
    delta: float = 0.95
    h_norm: str = "support"             # raw | support | vocab
    g: str = "h"                        # h | one_minus_h
    # cascade
    tau_pos: float = 0.8
    tau_seq: float = 0.9
    cascade_scope: str = "parent"       # parent | level
    cascade_budget: float = 1.0         # moved mass per verification step
    # lantern
    lantern_k: int = 8
    lantern_delta: float = 0.1
    # gsd
    gsd_group: int = 8
    gsd_gap: float = 0.15
    gsd_dist: float = 1.0

    def __post_init__(self):
        _check_choice("method", self.method, METHODS)
        for name in ("temperature", "top_p", "cfg", "lam", "delta", "tau_pos", "tau_seq", "cascade_budget",
                     "lantern_delta", "gsd_gap", "gsd_dist"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                raise ConfigError(f"--{_flag(name)} must be a finite number, got {v!r}")
        for name in ("temperature", "lam", "delta", "cascade_budget", "lantern_delta", "gsd_gap", "gsd_dist"):
            if getattr(self, name) < 0:
                raise ConfigError(f"--{_flag(name)} must be >= 0, got {getattr(self, name)}")
        if not 0 < self.top_p <= 1:
            raise ConfigError(f"--top-p must be in (0, 1], got {self.top_p}")
        if not 0 < self.cfg <= 50:
            raise ConfigError(f"--cfg must be in (0, 50], got {self.cfg}")
        if self.temperature > 10:
            raise ConfigError(f"--temperature must be <= 10, got {self.temperature}")
        for name, lo, hi in (("seed", 0, 2 ** 63 - 1), ("top_k", 0, 1 << 20), ("window", 2, 64),
                             ("tree_depth", 1, 12), ("tree_topk", 1, 16), ("tree_nodes", 1, 128),
                             ("lantern_k", 1, 64), ("gsd_group", 1, 64)):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                raise ConfigError(f"--{_flag(name)} must be an integer in [{lo}, {hi}], got {v!r}")
        _check_choice("init", self.init, ("random", "repeat_horizon", "repeat_vertical"))
        _check_choice("tree", self.tree, ("dynamic", "static", "chain"))
        _check_choice("tree_sampling", self.tree_sampling, ("topk", "sample"))
        _check_choice("h_norm", self.h_norm, ("raw", "support", "vocab"))
        _check_choice("g", self.g, ("h", "one_minus_h"))
        _check_choice("cascade_scope", self.cascade_scope, ("parent", "level"))
        if not isinstance(self.prompt, str) or not self.prompt.strip():
            raise ConfigError("--prompt must be a non-empty text")
        if len(self.prompt) > MAX_PROMPT:
            raise ConfigError(f"--prompt is {len(self.prompt)} characters; the limit is {MAX_PROMPT}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "RunConfig":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


def _flag(name: str) -> str:
    return name.replace("_", "-")


def _check_choice(name, value, choices):
    if value not in choices:
        raise ConfigError(f"--{_flag(name)} must be one of {', '.join(choices)}; got {value!r}")
