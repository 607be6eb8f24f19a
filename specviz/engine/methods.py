"""The method registry: one declarative record per decoding method.

A method is a drafter family (none, Jacobi window, draft tree — families.py), an acceptance rule (rules.py), and for
CASCADE a group builder (groups.py). Its record also carries its own knobs, a one-line description, whether it is
lossless, and how the instant preview re-scores its recorded drafts. Everything else derives from here: RunConfig's
fields and validation, the CLI flags, the app's method list, controls and lane headers, the sweep tab, the preview,
the trace checks and the bench's spec parser. Adding a method = a rule function (and/or a family) + one `register`.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable

from specviz.analysis import preview
from specviz.core.knobs import COMMON, Knob
from specviz.core.sampling import entropy, tv
from specviz.engine import families, rules
from specviz.engine.codebook import embedding_table, neighbour_table
from specviz.engine.groups import READINGS, cascade_groups

DECISIONS = ("exact", "relaxed", "rejected", "resampled", "bonus", "ar")


@dataclass(frozen=True)
class Method:
    name: str
    label: str                                   # lane title in the app
    family: type                                 # families.AR | families.Jacobi | families.Tree | another Family
    summary: str                                 # one line under the lane title
    lossless: bool
    knobs: tuple = ()                            # knob names the rule reads (sweep tab, preview, lane header)
    declares: tuple = ()                         # Knob records this method introduces
    rule: Callable | None = None                 # (cfg, model) -> accept_fn(q (L,V), p (L,V)) -> a (L,V)
    groups: Callable | None = None               # (tree, hidden (N,h), cfg) -> group_fn (CASCADE)
    rescore: Callable | None = None              # (judged events of one step, knob values) -> [b'] (preview)
    check: Callable | None = None                # (cfg) -> error text or None, for combinations of knobs
    reading: str = ""                            # which reading of the paper runs, in which units
    bound: Callable | None = None                # (judged TokenEvent, cfg) -> the rule's promised per-draft TV cost
    forces: dict = field(default_factory=dict)   # knob -> value this method always runs with (set in the config)

    @property
    def decisions(self) -> frozenset:
        """Decisions a run of this method may record after the prefill."""
        if self.family is families.AR:
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


class Live(Sequence):
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


def ui_knobs(where: str | None = None) -> tuple[Knob, ...]:
    """Knobs the app shows as controls ("main": beside the methods, previewed; "advanced": the accordion)."""
    return tuple(k for k in all_knobs() if k.ui and (where is None or k.ui == where))


METHODS = Live(lambda: tuple(REGISTRY))


# ---------------------------------------------------------------------------------------------------- rule builders
def _with_residual(fn, residual):
    fn.residual = residual                       # the residual protocol (rules.judge, docs/methods.md §1.2)
    return fn


def _csd_g(cfg, h_norm_value):
    return (1 - h_norm_value).clamp_min(0) if cfg.g == "one_minus_h" else h_norm_value


def _csd_rule(cfg, model):
    def csd(q, p):
        return rules.csd(q, p, cfg.lam * _csd_g(cfg, entropy(q, cfg.h_norm)), tv(p, q), cfg.delta)
    return csd


def _csd_bound(ev, cfg) -> float:
    """docs/methods.md §3.3: min(TV(p, q), λ·g(H)) where TV(p, q) < δ, else 0."""
    gh = max(0.0, 1.0 - ev.entropy_norm) if cfg.g == "one_minus_h" else ev.entropy_norm
    return min(ev.tv, cfg.lam * gh) if ev.tv < cfg.delta else 0.0


def _lantern_builder(plus: bool):
    def build(cfg, model):
        k, lam = cfg.lantern_k, (cfg.lanternpp_lambda if plus else None)
        nbrs = neighbour_table(model, min(k + 1, model.codebook_size - 1))

        def budget(q):
            return rules.lantern_budget(q, cfg.lantern_delta, lam)

        def lantern(q, p):
            return rules.lantern(q, p, nbrs, k, budget(q))
        variant = cfg.lantern_residual
        return _with_residual(lantern, None if variant == "tv_optimal" else
                              rules.lantern_residual(nbrs, k, budget, variant))
    return build


def _lantern_bound(ev, cfg) -> float | None:
    """docs/methods.md §5.4: δ per point-mass draft (TV-optimal residual); TV(p, q) for a sampled draft law."""
    if cfg.lantern_residual != "tv_optimal":
        return None
    return cfg.lantern_delta if ev.point_mass else ev.tv


def _lanternpp_bound(ev, cfg) -> float | None:
    """docs/methods.md §6: (λ - 1)·q(x) per point-mass draft (TV-optimal residual); TV(p, q) for a sampled law."""
    if cfg.lantern_residual != "tv_optimal":
        return None
    return (cfg.lanternpp_lambda - 1) * ev.p_target if ev.point_mass else ev.tv


def _lantern_check(cfg) -> str | None:
    if cfg.lantern_delta > 1:
        return (f"--lantern-delta {cfg.lantern_delta} > 1: LANTERN's δ is an additive TV budget in [0, 1]; the "
                "released code reads δ > 1 as LANTERN++'s λ — use --method lanternpp --lanternpp-lambda "
                f"{cfg.lantern_delta}")
    return None


def _gsd_rule(cfg, model):
    released = cfg.gsd_mode == "released"
    vecs = embedding_table(model) if released else model.code_vectors().float().cpu()

    def gsd(q, p):
        return rules.gsd(q, p, vecs, cfg.gsd_group, cfg.gsd_gap, cfg.gsd_dist, cfg.gsd_mode)
    return _with_residual(gsd, rules.plain_residual if released else None)


def _gsd_bound(ev, cfg) -> float | None:
    """docs/methods.md §4.4: any a <= 1 with the TV-optimal residual costs at most TV(p, q); none when released."""
    return ev.tv if cfg.gsd_mode == "ours" else None


def _zero_bound(ev, cfg) -> float:
    return 0.0


# ---------------------------------------------------------------------------------------------------- the methods
register(Method("ar", "AR", families.AR, "autoregressive baseline", True))
register(Method("sjd", "SJD", families.Jacobi, "Jacobi window · lossless", True))
register(Method(
    "csd", "CSD (content-aware)", families.Jacobi, "Jacobi · entropy-relaxed (content-aware SD)", False,
    ("lam", "delta"),
    declares=(
        Knob("lam", float, 0.5, 0, label="λ  CSD strength (per unit of H/log|supp q|; raw: per nat)", ui="main",
             ui_hi=10, step=0.05,
             help="CSD relaxation strength λ in b = min(1, q/p + λ·g(H)), in the units --h-norm sets: support "
                  "(default) = per unit of H/log|supp q|, i.e. λ/log|supp q| per nat at each slot (λ = 1 on 2048 "
                  "codes ≈ 0.13 per nat); raw = per nat. Default 0.5 from the scenes sweep (README, Defaults)"),
        Knob("delta", float, 0.5, 0, label="δ  CSD TV gate", ui="main", ui_hi=1, step=0.01,
             help="CSD relaxes only where TV(p, q) < δ"),
        Knob("h_norm", str, "support", choices=("raw", "support", "vocab"),
             help="entropy units for CSD's λ: raw (nats), support (H / log|supp q|, comparable across codebooks and "
                  "top-k), vocab (H / log V)"),
        Knob("g", str, "h", choices=("h", "one_minus_h"), help="CSD relaxation shape g(H): H or 1 - H"),
    ),
    rule=_csd_rule, rescore=preview.csd_rescore, bound=_csd_bound,
    reading="CSD (content-aware SD, Wang et al. 2026; not continuous SD for MAR): b = min(1, q/p + λ·g(H)) where "
            "TV(p, q) < δ; H normalised as --h-norm says; TV-optimal residual; cost <= min(TV(p, q), λ·g(H))"))
register(Method(
    "gsd", "GSD", families.Jacobi, "Jacobi · grouped", False, ("gsd_group", "gsd_gap", "gsd_mode"),
    declares=(
        Knob("gsd_group", int, 8, 1, 64, help="GSD group size G (tokens around the draft in the target ranking; "
                                              "the released code uses 14)"),
        Knob("gsd_gap", float, 0.15, 0, help="GSD: keep group tokens with |q(z) - q(x)| < gap (released: 0.15)"),
        Knob("gsd_dist", float, 1.0, 0, help="GSD: keep group tokens within this squared distance (ours: codebook "
                                             "vectors; released: the LLM's input embeddings, threshold 0.5)"),
        Knob("gsd_mode", str, "ours", choices=("ours", "released"), label="GSD reading",
             help="ours: a window of G distinct tokens, codebook distance, TV-optimal residual; released: "
                  "junhyukso/GSD's window (ranks r-6..r+7 for G = 14, lossless when empty), input-embedding "
                  "distance, residual norm([q - p]+)"),
    ),
    rule=_gsd_rule, bound=_gsd_bound,
    reading="GSD (So et al. 2025): a = min(1, Σ_group q / Σ_group p) over a window of the target ranking; "
            "--gsd-mode says whose window, distance and residual"))
register(Method("sd", "SD", families.Tree, "draft tree · lossless", True,
                reading="EAGLE-1/2 verification (docs/methods_trees.md): siblings in order against the running "
                        "residual (P3); sampled siblings are pruned by draw order only, so the tree stays lossless"))
register(Method(
    "cascade", "CASCADE", families.Tree, "draft tree · CASCADE groups", False,
    ("tau_pos", "tau_seq", "cascade_budget"),
    declares=(
        Knob("tau_pos", float, 0.8, label="τ_pos  CASCADE I(n)", ui="main", ui_lo=0.5, ui_hi=1, step=0.005,
             help="CASCADE interchangeable set: cosine of target hidden states >= τ_pos"),
        Knob("tau_seq", float, 0.8, label="τ_seq  CASCADE C(n)", ui="main", ui_lo=0.5, ui_hi=1, step=0.005,
             help="CASCADE convergent set: cosine >= τ_seq"),
        Knob("cascade_sets", str, "paper", choices=tuple(READINGS),
             help="CASCADE sets: paper (I = same tree level, C = consecutive levels) or siblings (our earlier "
                  "reading: I = same-parent siblings, C = siblings with similar children)"),
        Knob("cascade_budget", float, 1.0, 0, label="δ  CASCADE TV budget per step", ui="advanced", ui_hi=2,
             step=0.05, help="CASCADE: Σ over a step's judged levels of TV(level output law, q) stays <= δ"),
    ),
    groups=cascade_groups, rescore=preview.cascade_rescore,
    reading="paper reading by default (--cascade-sets paper): " + READINGS["paper"] + "; the step's levels share "
            "a TV budget δ, each level's relaxation scaled by one factor so its exact TV fits before deciding"))
_RESIDUAL = Knob("lantern_residual", str, "tv_optimal", choices=("tv_optimal", "lumina", "llamagen"),
                 label="LANTERN residual",
                 help="after a rejection: tv_optimal = norm([q - p·a]+); lumina / llamagen = the released code's "
                      "zeroing of the draft's k+1 nearest codes (in the target / in the draft law)")
register(Method(
    "lantern", "LANTERN", families.Tree, "draft tree · latent neighbours", False,
    ("lantern_delta", "lantern_k", "lantern_residual"),
    declares=(
        Knob("lantern_k", int, 8, 1, 64, help="LANTERN / LANTERN++ neighbour cap k"),
        Knob("lantern_delta", float, 0.25, 0, help="LANTERN additive TV budget δ per draft, in [0, 1] (the released "
                                                  "code's δ > 1 is LANTERN++: --method lanternpp)"),
        _RESIDUAL,
    ),
    rule=_lantern_builder(plus=False), check=_lantern_check, bound=_lantern_bound,
    reading="LANTERN (Jang et al. 2025): q~(x) = q(x) + Σ of q over x's m* nearest codes, m* = max{m <= k : "
            "s_m <= δ}; a = min(1, q~/p); cost <= δ per point-mass draft with the TV-optimal residual"))
register(Method(
    "lanternpp", "LANTERN++", families.Tree, "draft tree · latent neighbours, multiplicative budget", False,
    ("lanternpp_lambda", "lantern_k", "lantern_residual"),
    declares=(
        Knob("lanternpp_lambda", float, 10.0, 1, label="λ  LANTERN++ multiplier", ui_hi=20, step=0.5,
             help="LANTERN++ budget (λ - 1)·q(x): the relaxed target q~(x) <= λ·q(x) (released runs: k=10 λ=5, "
                  "k=5 λ=10 or 20, static tree)"),
        _RESIDUAL,
    ),
    rule=_lantern_builder(plus=True), bound=_lanternpp_bound,
    reading="LANTERN++ (Park et al. 2025): LANTERN with the budget (λ - 1)·q(x); the paper and released runs use a "
            "static tree (--tree static), not forced here"))


# ---------------------------------------------------------------------------------------------------- issue 15 methods
from specviz.engine.drafters.pac import SJDPAC, tree_nodes  # noqa: E402  (kept inside the issue-15 block)


def _pac_check(cfg):
    need = tree_nodes(cfg.pac_width, cfg.pac_depth)
    if cfg.window < need:
        return (f"sjdpac feeds --window nodes per forward; its tree (--pac-width {cfg.pac_width}, --pac-depth "
                f"{cfg.pac_depth}) alone has {need}: raise --window to >= {need} or shrink the tree")
    return None


register(Method(
    "mcsjd", "MC-SJD", families.Jacobi, "Jacobi · drafts coupled across iterations · lossless", True,
    declares=(Knob("couple", int, 0, 0, 1, label="Couple Jacobi drafts (1 = MC-SJD coupling)", ui="advanced",
                   step=1, help="Jacobi methods (sjd, csd, gsd): 1 = draw each refined draft by "
                   "maximal coupling with the slot's previous draft (MC-SJD); mcsjd always couples"),),
    forces={"couple": 1},
    reading="maximal coupling of each refined slot's new draft with its previous draft; kept law = the new law "
            "(the draft's marginal); fresh slots are point masses; verification unchanged"))
register(Method(
    "sjdpac", "SJD-PAC", SJDPAC, "Jacobi + proactive K-ary tree + adaptive continuation · lossless", True,
    ("pac_width", "pac_depth"),
    declares=(
        Knob("pac_width", int, 3, 1, 8, label="SJD-PAC tree width K", ui="advanced", step=1,
             help="SJD-PAC proactive tree width K (candidates per tree level)"),
        Knob("pac_depth", int, 3, 1, 6, label="SJD-PAC tree depth D", ui="advanced", step=1,
             help="SJD-PAC tree depth D, root included (K-ary levels: D - 1); "
             "the rest of --window nodes is a chain"),
    ),
    check=_pac_check,
    forces={"init": "random"},
    reading="released sampler's tree layout and defaults (K=3, D=3; window = nodes per forward); P3 walk, "
            "candidates without replacement, continuation = coupling of the old drafts with the stale laws; fresh "
            "drafts are uniform as released, so the config records init=random whatever --init says"))
