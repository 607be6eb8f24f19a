"""Knobs: one declarative record per run parameter. The CLI flags, the app's controls, `RunConfig` validation, the
bench's spec parser and the sweep tab all read these records, so a knob is declared once (here for the knobs every
method shares, in its method's record in methods.py for a rule's own knobs)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from specviz.core.numbers import finite_number


class ConfigError(ValueError):
    """A bad knob value; the message names the fix."""


@dataclass(frozen=True)
class Knob:
    name: str                        # RunConfig field, trace config key; the CLI flag is --name-with-dashes
    kind: type                       # int | float | str
    default: Any
    lo: float | None = None          # valid range (None: unbounded)
    hi: float | None = None
    open_lo: bool = False            # lo itself is excluded
    choices: tuple = ()              # str knobs: the allowed values ("" = free text)
    label: str = ""                  # the app's control label (with units where they matter)
    help: str = ""                   # CLI help and the control's info line
    ui: str = ""                     # "" not in the app | "setup" (above the sliders) | "main" (slider beside the
    #                                  methods, previewed) | "advanced" (the accordion)
    ui_lo: float | None = None       # slider ends when the valid range is wider than a slider should be
    ui_hi: float | None = None
    step: float | None = None        # slider step
    symbol: str = ""                 # how plots, captions and tables write it (λ, δ, τ_pos, G); "" = its name
    quiet: bool = False              # left out of RunConfig.to_dict() (so of a trace's config) at its default: a knob
    #                                  added after contract v2 keeps the default mode's traces byte-identical

    @property
    def sym(self) -> str:
        """The knob as a plot or a caption writes it: its symbol, else its name."""
        return self.symbol or self.name

    @property
    def short(self) -> str:
        """The control's label where a row has room for one word (Present mode's controls): its symbol, else its
        name capitalised ("Noise")."""
        return self.symbol or self.name.capitalize()

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def check(self, v) -> None:
        """Raise ConfigError naming the flag when v is not a valid value."""
        if self.kind is str:
            if self.choices and v not in self.choices:
                raise ConfigError(f"{self.flag} must be one of {', '.join(self.choices)}; got {v!r}")
            if not isinstance(v, str):
                raise ConfigError(f"{self.flag} must be a text, got {v!r}")
            return
        if self.kind is int:
            lo, hi = int(self.lo), int(self.hi)
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                raise ConfigError(f"{self.flag} must be an integer in [{lo}, {hi}], got {v!r}")
            return
        if not finite_number(v):
            raise ConfigError(f"{self.flag} must be a finite number, got {v!r}")
        low_bad = self.lo is not None and (v <= self.lo if self.open_lo else v < self.lo)
        high_bad = self.hi is not None and v > self.hi
        if low_bad or high_bad:
            raise ConfigError(f"{self.flag} must be {self.range_text()}, got {v}")

    def range_text(self) -> str:
        if self.lo is not None and self.hi is not None:
            return f"in {'(' if self.open_lo else '['}{_num(self.lo)}, {_num(self.hi)}]"
        if self.lo is not None:
            return f"{'>' if self.open_lo else '>='} {_num(self.lo)}"
        return f"<= {_num(self.hi)}" if self.hi is not None else "a finite number"

    def cast(self, v):
        """A value from text (CLI, bench specs) or from a UI number (floats) -> the knob's kind; validation is
        check()'s job. Whole floats become ints for int knobs; anything else is returned as it came."""
        if self.kind is int:
            if isinstance(v, float) and v.is_integer():
                return int(v)
            if isinstance(v, str):
                try:
                    return int(v)
                except ValueError:
                    return v
        if self.kind is float and (isinstance(v, int) and not isinstance(v, bool) or isinstance(v, str)):
            try:
                return float(v)
            except ValueError:
                return v
        return v


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


MAX_PROMPT = 500

# Knobs every method shares (sampling, drafting shape). Rule knobs live in their method's record (methods.py).
COMMON = (
    Knob("method", str, "ar", help="decoding method (see the methods table)"),
    Knob("model", str, "scenes", help="scenes, an allow-listed Janus-Pro id, or a local checkpoint"),
    Knob("draft_model", str, "", label="Drafter", ui="advanced",
         help="tree methods: a smaller checkpoint that drafts (empty = the model's own drafter: the EAGLE head shipped "
              "with scenes)"),
    Knob("prompt", str, "a red house on the left, a sunset sky over snow", help="the caption"),
    Knob("seed", int, 0, 0, 2 ** 63 - 1, help="one seed for drafts, uniforms and sampling"),
    Knob("noise", str, "papers", choices=("papers", "keyed"), quiet=True, ui="setup",
         label="Noise — papers: each method draws its own; keyed: all share AR's draws, so lossless lanes paint AR's "
               "image",
         help="papers = each method's own sampling (default); keyed = every random number keyed by (seed, position, "
              "purpose), so lossless methods paint AR's exact image and relaxed ones change it only where they relax "
              "(docs/methods.md §9)"),
    Knob("temperature", float, 1.0, 0, 10, label="Temperature (0 = greedy)", ui="advanced", ui_hi=2, step=0.05,
         help="0 = greedy"),
    Knob("top_k", int, 0, 0, 1 << 20, label="Top-k (0 = off)", ui="advanced", ui_hi=512, step=1, help="0 = off"),
    Knob("top_p", float, 1.0, 0, 1, open_lo=True, help="nucleus sampling mass"),
    Knob("cfg", float, 3.0, 0, 50, open_lo=True, label="CFG scale", ui="advanced", ui_lo=1, ui_hi=10, step=0.5,
         help="classifier-free guidance scale (1 = none)"),
    Knob("window", int, 16, 2, 64, label="Jacobi window length", ui="advanced", ui_hi=32, step=1,
         help="Jacobi window L (L-1 drafts + 1 new token per forward)"),
    Knob("init", str, "random", choices=("random", "repeat_horizon", "repeat_vertical"),
         help="how fresh Jacobi slots are drafted"),
    Knob("tree", str, "dynamic", choices=("dynamic", "static", "chain"), label="Tree shape", ui="advanced",
         help="dynamic (EAGLE-2), static (top path + siblings) or chain"),
    # depth 4, top-4, 24 nodes: on scenes v2 (ambiguous codes, like real AR image models) a small tree cannot show
    # CASCADE's groups: at depth 2 / top-2 / 3 nodes cascade compressed 1.12x sd's steps, at this shape 1.46x
    # with its defaults (README bench; docs/methods_trees.md §5). Every tree shape is slower than AR in wall time
    # on this CPU (depth 1: 0.70x)
    Knob("tree_depth", int, 4, 1, 12, label="Tree depth", ui="advanced", ui_hi=8, step=1, help="draft levels"),
    Knob("tree_topk", int, 4, 1, 16, label="Tree branching (top-k)", ui="advanced", ui_hi=8, step=1,
         help="children per expanded node"),
    Knob("tree_nodes", int, 24, 1, 128, help="dynamic tree: nodes kept after pruning"),
    Knob("tree_sampling", str, "topk", choices=("topk", "sample"),
         help="topk (point masses, EAGLE-2) or sample (without replacement, EAGLE-1)"),
)
