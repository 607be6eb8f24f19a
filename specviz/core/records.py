"""The trace's records (docs/design.md §4): what happened at every judged token of every verification step.

Plain Python scalars only, so a trace round-trips through JSON exactly (trace.py holds the Trace and its JSON
contract; checks.py the structural checks of anything read from a file).
"""
from __future__ import annotations

from dataclasses import dataclass, field

DECISIONS = ("exact", "relaxed", "rejected", "resampled", "bonus", "ar")
COMMITTING = frozenset({"exact", "relaxed", "resampled", "bonus", "ar"})
JUDGED = frozenset({"exact", "relaxed", "rejected"})    # decisions on a draft the rule judged
ACCEPTED = frozenset({"exact", "relaxed"})              # a judged draft that passed (exactly or relaxed)
TARGET_SAMPLED = COMMITTING - ACCEPTED                  # committed tokens the target drew itself: no draft passed


@dataclass(frozen=True)
class Sibling:
    """One other candidate m considered for a node n's group (Groups.siblings) (enough to re-score τ_pos / τ_seq)."""
    node: int
    token: int
    q: float                     # target probability of m's token at n's position
    cos: float                   # cos(h_m, h_n) of the target hidden states
    child_cos: float             # largest cosine between a child of m and a child of n (-1: a branch has none)
    level: int = -1              # m's tree level (-1: unknown, traces before the paper reading)
    parent: int = -1             # m's parent node (-1: unknown)


@dataclass(frozen=True)
class Drafted:
    """One proposed token of a verification step: a window slot or a tree node."""
    node: int
    parent: int                  # -1 for a chain's first slot's parent (the root)
    pos: int
    token: int


@dataclass(frozen=True)
class Groups:
    """The `groups` extension of a judged TokenEvent: what a method whose rule relaxes over groups of tree candidates
    (CASCADE, Method.groups) records at a node. Contract version 2 stores these fields flat on the event, with these
    defaults on every other event (trace.py writes and reads them so; None here = every field at its default)."""
    similarity: float = 0.0      # largest cosine to a group member
    interchangeable: list = field(default_factory=list)   # node ids of I(n)
    convergent: list = field(default_factory=list)        # node ids of C(n)
    siblings: list = field(default_factory=list)          # list[Sibling]: every candidate looked at (re-scoring)
    budget_left: float = 0.0     # TV budget the level could use, before deciding
    scale: float = 1.0           # factor on the level's relaxation mass that made its TV fit the budget

    @classmethod
    def unless_default(cls, **kw) -> Groups | None:
        """The extension, or None when every field has its default value and type (so a round trip through JSON is
        exact, and a value of the wrong type is kept for the checks to refuse)."""
        g, d = cls(**kw), cls()
        same = all(type(getattr(g, f)) is type(getattr(d, f)) and getattr(g, f) == getattr(d, f) for f in GROUP_FIELDS)
        return None if same else g


GROUP_FIELDS = ("similarity", "interchangeable", "convergent", "siblings", "budget_left", "scale")


@dataclass(frozen=True)
class TokenEvent:
    pos: int                     # raster position in the image grid
    token: int
    decision: str                # one of DECISIONS
    level: int = 0               # draft depth within the step (window slot or tree level), 0 for ar
    node: int = -1               # node id within the step's draft (tree) or slot index (window)
    p_draft: float = 0.0         # p(x) under the law the draft came from (1.0 for point masses)
    p_target: float = 0.0        # q(x)
    accept_prob: float = 1.0     # b = a(x)
    exact_prob: float = 1.0      # min(1, q(x)/p(x))
    u: float = -1.0              # the uniform the decision used (-1 when none)
    entropy: float = 0.0         # H(q) in nats
    entropy_norm: float = 0.0    # H(q) normalised as the run's h_norm says
    tv: float = 0.0              # TV(p, q) at this slot, against the target law q
    tv_cost: float = 0.0         # TV(o, q) of this position's output law (trees: the level's whole walk; 0 lossless)
    point_mass: bool = True      # the draft law was a point mass
    moved: float = 0.0           # tree rules: target mass granted to x beyond q(x) (CASCADE: against the budget)
    tv_residual: float = 0.0     # TV(p, r) against the law r the draft was judged against (tree siblings after the
    #                              first: the running residual; chains: equals tv)
    parent: int = -1             # tree: the node's parent (-1 for chains and sampled tokens)
    groups: Groups | None = None  # the `groups` extension: what a group-forming method (CASCADE) adds; None elsewhere
    # keyed noise only (docs/methods.md §9; None = absent from the JSON, so the papers' mode traces are unchanged):
    coupled_prob: float | None = None   # J_x/p_x: P(draft = the target's race sample | draft x), beside exact_prob
    target_sample: int | None = None    # x*: the token AR draws at this position under the same keyed noise

    @property
    def commits(self) -> bool:
        return self.decision in COMMITTING


@dataclass(frozen=True)
class StepEvent:
    step: int                    # target forward index (0 = prefill)
    seconds: float
    events: list                 # list[TokenEvent]
    drafted: list = field(default_factory=list)   # list[Drafted]: what was fed / proposed


