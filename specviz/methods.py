"""The method registry: one declarative record per decoding method.

A method is a drafter family (none, Jacobi window, draft tree — families.py), an acceptance rule (rules.py), and for
CASCADE a group builder (groups.py). Its record also carries its own knobs, a one-line description, whether it is
lossless, and how the instant preview re-scores its recorded drafts. Everything else derives from here: RunConfig's
fields and validation, the CLI flags, the app's method list, controls and lane headers, the sweep tab, the preview,
the trace checks and the bench's spec parser. Adding a method = a rule function (and/or a family) + one `register`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from specviz import families, preview, rules
from specviz.codebook import neighbour_table
from specviz.groups import cascade_groups
from specviz.knobs import COMMON, Knob
from specviz.sampling import entropy, tv

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


class _Names:
    """A live, ordered view of the registered method names (so `METHODS` includes methods registered later)."""

    def __iter__(self):
        return iter(list(REGISTRY))

    def __len__(self):
        return len(REGISTRY)

    def __getitem__(self, i):
        return list(REGISTRY)[i]

    def __contains__(self, name):
        return name in REGISTRY

    def index(self, name):
        return list(REGISTRY).index(name)

    def __repr__(self):
        return repr(tuple(REGISTRY))


METHODS = _Names()


# ---------------------------------------------------------------------------------------------------- rule builders
def _csd_rule(cfg, model):
    def csd(q, p):
        h = entropy(q, cfg.h_norm)
        g = (1 - h).clamp_min(0) if cfg.g == "one_minus_h" else h
        return rules.csd(q, p, cfg.lam * g, tv(p, q), cfg.delta)
    return csd


def _lantern_rule(cfg, model):
    nbrs = neighbour_table(model, cfg.lantern_k)
    return lambda q, p: rules.lantern(q, p, nbrs, cfg.lantern_k, cfg.lantern_delta)


def _gsd_rule(cfg, model):
    vecs = model.code_vectors().float().cpu()
    return lambda q, p: rules.gsd(q, p, vecs, cfg.gsd_group, cfg.gsd_gap, cfg.gsd_dist)


# ---------------------------------------------------------------------------------------------------- the methods
register(Method("ar", "AR", families.AR, "autoregressive baseline", True))
register(Method("sjd", "SJD", families.Jacobi, "Jacobi window · lossless", True))
register(Method(
    "csd", "CSD (content-aware)", families.Jacobi, "Jacobi · entropy-relaxed", False, ("lam", "delta"),
    declares=(
        Knob("lam", float, 4.0, 0, label="λ  CSD strength (per unit of normalised entropy)", ui="main", ui_hi=10,
             step=0.05, help="CSD relaxation strength λ in b = min(1, q/p + λ·g(H)); H as --h-norm says"),
        Knob("delta", float, 0.95, 0, label="δ  CSD TV gate", ui="main", ui_hi=1, step=0.01,
             help="CSD relaxes only where TV(p, q) < δ"),
        Knob("h_norm", str, "support", choices=("raw", "support", "vocab"),
             help="entropy units for CSD: raw (nats), support (H / log|supp q|), vocab (H / log V)"),
        Knob("g", str, "h", choices=("h", "one_minus_h"), help="CSD relaxation shape g(H): H or 1 - H"),
    ),
    rule=_csd_rule, rescore=preview.csd_rescore))
register(Method(
    "gsd", "GSD", families.Jacobi, "Jacobi · grouped", False, ("gsd_group", "gsd_gap"),
    declares=(
        Knob("gsd_group", int, 8, 1, 64, help="GSD group size G (tokens around the draft in the target ranking)"),
        Knob("gsd_gap", float, 0.15, 0, help="GSD: keep group tokens with |q(z) - q(x)| < gap"),
        Knob("gsd_dist", float, 1.0, 0, help="GSD: keep group tokens within this squared code distance"),
    ),
    rule=_gsd_rule))
register(Method("sd", "SD", families.Tree, "draft tree · lossless", True))
register(Method(
    "cascade", "CASCADE", families.Tree, "draft tree · CASCADE groups", False,
    ("tau_pos", "tau_seq", "cascade_budget"),
    declares=(
        Knob("tau_pos", float, 0.8, label="τ_pos  CASCADE I(n)", ui="main", ui_lo=0.5, ui_hi=1, step=0.005,
             help="CASCADE interchangeable set: cosine of target hidden states >= τ_pos"),
        Knob("tau_seq", float, 0.9, label="τ_seq  CASCADE C(n)", ui="main", ui_lo=0.5, ui_hi=1, step=0.005,
             help="CASCADE convergent set: cosine >= τ_seq"),
        Knob("cascade_scope", str, "parent", choices=("parent", "level"),
             help="CASCADE I(n) over same-parent siblings or the whole tree level"),
        Knob("cascade_budget", float, 1.0, 0, label="CASCADE moved-mass budget per step", ui="advanced", ui_hi=2,
             step=0.05, help="CASCADE budget per verification step"),
    ),
    groups=cascade_groups, rescore=preview.cascade_rescore))
register(Method(
    "lantern", "LANTERN", families.Tree, "draft tree · latent neighbours", False, ("lantern_delta", "lantern_k"),
    declares=(
        Knob("lantern_k", int, 8, 1, 64, help="LANTERN neighbour cap k"),
        Knob("lantern_delta", float, 0.1, 0, help="LANTERN additive TV budget δ per draft"),
    ),
    rule=_lantern_rule))


# ---------------------------------------------------------------------------------------------------- issue 15 methods
from specviz.drafters.pac import SJDPAC, tree_nodes  # noqa: E402  (kept inside the issue-15 block)


class CoupledJacobi(families.Jacobi):
    """MC-SJD (So et al., arXiv 2510.24211): the Jacobi window with coupled drafts always on (drafters/jacobi.py)."""

    @staticmethod
    def coupled(cfg) -> bool:
        return True


def _pac_check(cfg):
    need = tree_nodes(cfg.pac_width, cfg.pac_depth)
    if cfg.window < need:
        return (f"sjdpac feeds --window nodes per forward; its tree (--pac-width {cfg.pac_width}, --pac-depth "
                f"{cfg.pac_depth}) alone has {need}: raise --window to >= {need} or shrink the tree")
    return None


register(Method(
    "mcsjd", "MC-SJD", CoupledJacobi, "Jacobi · drafts coupled across iterations · lossless", True,
    declares=(Knob("couple", int, 0, 0, 1, help="Jacobi methods (sjd, csd, gsd): 1 = draw each refined draft by "
                   "maximal coupling with the slot's previous draft (MC-SJD); mcsjd always couples"),),
    reading="maximal coupling of each refined slot's new draft with its previous draft; kept law = the new law "
            "(the draft's marginal); fresh slots are point masses; verification unchanged"))
register(Method(
    "sjdpac", "SJD-PAC", SJDPAC, "Jacobi + proactive K-ary tree + adaptive continuation · lossless", True,
    ("pac_width", "pac_depth"),
    declares=(
        Knob("pac_width", int, 3, 1, 8, help="SJD-PAC proactive tree width K (candidates per tree level)"),
        Knob("pac_depth", int, 3, 1, 6, help="SJD-PAC tree depth D, root included (K-ary levels: D - 1); "
             "the rest of --window nodes is a chain"),
    ),
    check=_pac_check,
    reading="released sampler's tree layout and defaults (K=3, D=3; window = nodes per forward); P3 walk, "
            "candidates without replacement, continuation = coupling of the old drafts with the stale laws"))
