"""The catalogue of decoding methods: one registered record each (registry.py), with its hooks (rule builder, bound,
re-scoring, group builder, what it adds to the inspector).

Importing this module registers every method; the engine package imports it first (engine/__init__.py), so the
registry's API, imported from registry.py, always sees the whole catalogue. This is the one place that knows methods by
name.
"""
from __future__ import annotations

import torch

from specviz.core.knobs import Knob
from specviz.core.sampling import entropy, tv
from specviz.engine import families, pjd, rescore, rules, zipar
from specviz.engine.codebook import embedding_table, neighbour_table
from specviz.engine.drafters.pac import tree_nodes
from specviz.engine.explain import cascade_explain, cascade_reading, csd_explain
from specviz.engine.groups import READINGS, cascade_groups
from specviz.engine.gsd_sorted import window_at
from specviz.engine.registry import (
    Claim,
    KnobValues,
    Method,
    register,
)


# ---------------------------------------------------------------------------------------------------- rule builders
def _with_residual(fn, residual):
    fn.residual = residual                       # the residual protocol (rules.judge, docs/methods.md §1.2)
    return fn


def _csd_rule(cfg, model):
    def csd(q, p):
        return rules.csd(q, p, cfg.lam * rules.csd_g(entropy(q, cfg.h_norm), cfg.g), tv(p, q), cfg.delta)

    def at(q, p, x):                # b at the drafts: the rows' entropy and TV, no (L, V) acceptance rows
        return rules.csd_at(q, p, x, cfg.lam * rules.csd_g(entropy(q, cfg.h_norm), cfg.g), tv(p, q), cfg.delta)
    csd.at = at
    return csd


def _csd_bound(ev, knobs: KnobValues) -> float:
    """docs/methods.md §3.3: min(TV(p, q), λ·g(H)) where TV(p, q) < δ, else 0."""
    return min(ev.tv, knobs.lam * rules.csd_g(ev.entropy_norm, knobs.g)) if ev.tv < knobs.delta else 0.0


def _lantern_builder(plus: bool):
    def build(cfg, model):
        k, lam = cfg.lantern_k, (cfg.lanternpp_lambda if plus else None)
        nbrs = neighbour_table(model, min(k + 1, model.codebook_size - 1))
        nbrs = nbrs.to(getattr(model, "device", "cpu"))      # once, where the laws live (the toy models: the CPU)

        def budget(q):
            return rules.lantern_budget(q, cfg.lantern_delta, lam)

        def lantern(q, p):
            return rules.lantern(q, p, nbrs, k, budget(q))
        lantern.at = lambda q, p, x: rules.lantern_at(q, p, x, nbrs, k, budget)     # a draft's b from its cells
        variant = cfg.lantern_residual
        return _with_residual(lantern, None if variant == "tv_optimal" else
                              rules.lantern_residual(nbrs, k, budget, variant))
    return build


def _lantern_bound(ev, knobs: KnobValues) -> float | None:
    """docs/methods.md §5.4: δ per point-mass draft (TV-optimal residual); TV(p, q) for a sampled draft law."""
    if knobs.lantern_residual != "tv_optimal":
        return None
    return knobs.lantern_delta if ev.point_mass else ev.tv


def _lanternpp_bound(ev, knobs: KnobValues) -> float | None:
    """docs/methods.md §6: (λ - 1)·q(x) per point-mass draft (TV-optimal residual); TV(p, q) for a sampled law."""
    if knobs.lantern_residual != "tv_optimal":
        return None
    return (knobs.lanternpp_lambda - 1) * ev.p_target if ev.point_mass else ev.tv


def _lantern_check(knobs: KnobValues) -> str | None:
    if knobs.lantern_delta > 1:
        return (f"--lantern-delta {knobs.lantern_delta} > 1: LANTERN's δ is an additive TV budget in [0, 1]; the "
                "released code reads δ > 1 as LANTERN++'s λ — use --method lanternpp --lanternpp-lambda "
                f"{knobs.lantern_delta}")
    return None


def _gsd_rule(cfg, model):
    released = cfg.gsd_mode == "released"
    vecs = embedding_table(model) if released else model.code_vectors().float().cpu()

    def gsd(q, p):
        nonlocal vecs
        vecs = vecs.to(q.device)                 # once: the laws stay where the model put them
        return rules.gsd(q, p, vecs, cfg.gsd_group, cfg.gsd_gap, cfg.gsd_dist, cfg.gsd_mode)

    def at(q, p, x):
        """The rule at the drafts alone (rules.accept_at): "ours" by its windows at x (gsd_sorted.window_at, no
        sort), else the full rows' cells."""
        if released or not 1 < cfg.gsd_group < q.shape[-1]:
            return gsd(q, p)[torch.arange(len(x), device=x.device), x]
        return window_at(q, p, x, vecs.to(q.device).float(), cfg.gsd_group, cfg.gsd_gap, cfg.gsd_dist)
    gsd.at = at
    return _with_residual(gsd, rules.plain_residual if released else None)


def _gsd_bound(ev, knobs: KnobValues) -> float | None:
    """docs/methods.md §4.4: any a <= 1 with the TV-optimal residual costs at most TV(p, q); none when released."""
    return ev.tv if knobs.gsd_mode == "ours" else None


# ---------------------------------------------------------------------------------------------------- the methods
register(Method(name="ar", label="AR", family=families.AR, summary="autoregressive baseline", lossless=True))
register(Method(name="sjd", label="SJD", family=families.Jacobi, summary="Jacobi window · lossless", lossless=True))
register(Method(
    name="csd", label="CSD (content-aware)", family=families.Jacobi,
    summary="Jacobi · entropy-relaxed (content-aware SD)", lossless=False, rule_knobs=("lam", "delta"),
    declares=(
        Knob("lam", float, 0.5, 0, symbol="λ",
             label="λ  CSD strength (per unit of H/log|supp q|; raw: per nat)", ui="main",
             ui_hi=10, step=0.05,
             help="CSD relaxation strength λ in b = min(1, q/p + λ·g(H)), in the units --h-norm sets: support "
                  "(default) = per unit of H/log|supp q|, i.e. λ/log|supp q| per nat at each slot (λ = 1 on 2048 "
                  "codes ≈ 0.13 per nat); raw = per nat. Default 0.5 from the scenes sweep (docs/benchmarks.md)"),
        Knob("delta", float, 0.5, 0, symbol="δ", label="δ  CSD TV gate", ui="main", ui_hi=1, step=0.01,
             help="CSD relaxes only where TV(p, q) < δ"),
        Knob("h_norm", str, "support", choices=("raw", "support", "vocab"),
             help="entropy units for CSD's λ: raw (nats), support (H / log|supp q|, comparable across codebooks and "
                  "top-k), vocab (H / log V)"),
        Knob("g", str, "h", choices=("h", "one_minus_h"), help="CSD relaxation shape g(H): H or 1 - H"),
    ),
    rule=_csd_rule, rescore=rescore.csd_rescore, bound=_csd_bound, explain=csd_explain,
    claims=(Claim(key="csd_relaxes_where_uncertain", text="CSD relaxes where the target is uncertain",
                  part="relaxed_uncertain_pct", base="uncertain_pct", gate="relaxed_pct",
                  where="in the upper entropy half"),
            Claim(key="csd_relaxes_where_detail_is_low", text="CSD relaxes where detail is low",
                  part="relaxed_low_detail_pct", base="low_detail_pct", gate="relaxed_pct",
                  where="in low-detail patches")),
    relaxation="CSD's λ·g(H), only where TV(p, q) < δ",
    reading="CSD (content-aware SD, Wang et al. 2026; not continuous SD for MAR): b = min(1, q/p + λ·g(H)) where "
            "TV(p, q) < δ; H normalised as --h-norm says; TV-optimal residual; cost <= min(TV(p, q), λ·g(H))"))
register(Method(
    name="gsd", label="GSD", family=families.Jacobi, summary="Jacobi · grouped", lossless=False,
    rule_knobs=("gsd_group", "gsd_gap", "gsd_mode"),
    declares=(
        Knob("gsd_group", int, 8, 1, 64, symbol="G",
             help="GSD group size G (tokens around the draft in the target ranking; "
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
    relaxation="the target mass of the draft's group (Σ_group q / Σ_group p, GSD)",
    reading="GSD (So et al. 2025): a = min(1, Σ_group q / Σ_group p) over a window of the target ranking; "
            "--gsd-mode says whose window, distance and residual"))
register(Method(name="sd", label="SD", family=families.TreeFamily, summary="draft tree · lossless", lossless=True,
                reading="EAGLE-1/2 verification (docs/methods_trees.md): siblings in order against the running "
                        "residual (P3); sampled siblings are pruned by draw order only, so the tree stays lossless"))
register(Method(
    name="cascade", label="CASCADE", family=families.TreeFamily, summary="draft tree · CASCADE groups",
    lossless=False, rule_knobs=("tau_pos", "tau_seq", "cascade_budget"),
    declares=(
        Knob("tau_pos", float, 0.8, symbol="τ_pos",
             label="τ_pos  CASCADE I(n)", ui="main", ui_lo=0.5, ui_hi=1, step=0.005,
             help="CASCADE interchangeable set: cosine of target hidden states >= τ_pos"),
        Knob("tau_seq", float, 0.8, symbol="τ_seq",
             label="τ_seq  CASCADE C(n)", ui="main", ui_lo=0.5, ui_hi=1, step=0.005,
             help="CASCADE convergent set: cosine >= τ_seq"),
        Knob("cascade_sets", str, "paper", choices=tuple(READINGS),
             help="CASCADE sets: paper (I = same tree level, C = consecutive levels) or siblings (our earlier "
                  "reading: I = same-parent siblings, C = siblings with similar children)"),
        Knob("cascade_budget", float, 1.0, 0, symbol="δ", label="δ  CASCADE TV budget per step", ui="advanced", ui_hi=2,
             step=0.05, help="CASCADE: Σ over a step's judged levels of TV(level output law, q) stays <= δ"),
    ),
    groups=cascade_groups, rescore=rescore.cascade_rescore, explain=cascade_explain,
    group_reading=cascade_reading,
    claims=(Claim(key="cascade_groups_in_low_detail", text="CASCADE groups gather in homogeneous (low-detail) patches",
                  part="grouped_low_detail_pct", base="low_detail_pct", gate="grouped_pct",
                  where="in low-detail patches"),
            Claim(key="cascade_groups_off_objects", text="CASCADE groups gather off objects (sky, ground)",
                  part="grouped_on_object_pct", base="object_pct", gate="grouped_pct", where="on objects",
                  higher=False)),
    relaxation="the q-mass of the node's group I(n) ∪ C(n), scaled to fit the level's share of the TV budget",
    reading="paper reading by default (--cascade-sets paper): " + READINGS["paper"] + "; the step's levels share "
            "a TV budget δ, each level's relaxation scaled by one factor so its exact TV fits before deciding"))
_RESIDUAL = Knob("lantern_residual", str, "tv_optimal", choices=("tv_optimal", "lumina", "llamagen"),
                 label="LANTERN residual",
                 help="after a rejection: tv_optimal = norm([q - p·a]+); lumina / llamagen = the released code's "
                      "zeroing of the draft's k+1 nearest codes (in the target / in the draft law)")
register(Method(
    name="lantern", label="LANTERN", family=families.TreeFamily, summary="draft tree · latent neighbours",
    lossless=False, rule_knobs=("lantern_delta", "lantern_k", "lantern_residual"),
    declares=(
        Knob("lantern_k", int, 8, 1, 64, symbol="k", help="LANTERN / LANTERN++ neighbour cap k"),
        Knob("lantern_delta", float, 0.25, 0, symbol="δ",
             help="LANTERN additive TV budget δ per draft, in [0, 1] (the released "
                                                  "code's δ > 1 is LANTERN++: --method lanternpp)"),
        _RESIDUAL,
    ),
    rule=_lantern_builder(plus=False), check=_lantern_check, bound=_lantern_bound,
    relaxation="the q-mass of the draft's nearest codes in latent space (LANTERN, within δ)",
    reading="LANTERN (Jang et al. 2025): q~(x) = q(x) + Σ of q over x's m* nearest codes, m* = max{m <= k : "
            "s_m <= δ}; a = min(1, q~/p); cost <= δ per point-mass draft with the TV-optimal residual"))
register(Method(
    name="lanternpp", label="LANTERN++", family=families.TreeFamily,
    summary="draft tree · latent neighbours, multiplicative budget", lossless=False,
    rule_knobs=("lanternpp_lambda", "lantern_k", "lantern_residual"),
    declares=(
        Knob("lanternpp_lambda", float, 10.0, 1, symbol="λ", label="λ  LANTERN++ multiplier", ui_hi=20, step=0.5,
             help="LANTERN++ budget (λ - 1)·q(x): the relaxed target q~(x) <= λ·q(x) (released runs: k=10 λ=5, "
                  "k=5 λ=10 or 20, static tree)"),
        _RESIDUAL,
    ),
    rule=_lantern_builder(plus=True), bound=_lanternpp_bound,
    relaxation="the q-mass of the draft's nearest codes, capped at (λ - 1)·q(x) (LANTERN++)",
    reading="LANTERN++ (Park et al. 2025): LANTERN with the budget (λ - 1)·q(x); the paper and released runs use a "
            "static tree (--tree static), not forced here"))


def _pac_check(knobs: KnobValues) -> str | None:
    need = tree_nodes(knobs.pac_width, knobs.pac_depth)
    if knobs.window < need:
        return (f"sjdpac feeds --window nodes per forward; its tree (--pac-width {knobs.pac_width}, --pac-depth "
                f"{knobs.pac_depth}) alone has {need}: raise --window to >= {need} or shrink the tree")
    return None


register(Method(
    name="mcsjd", label="MC-SJD", family=families.Jacobi,
    summary="Jacobi · drafts coupled across iterations · lossless", lossless=True,
    declares=(Knob("couple", int, 0, 0, 1, label="Couple Jacobi drafts (1 = MC-SJD coupling)", ui="advanced",
                   step=1, help="Jacobi methods (sjd, csd, gsd): 1 = draw each refined draft by "
                   "maximal coupling with the slot's previous draft (MC-SJD); mcsjd always couples"),),
    forces={"couple": 1},
    reading="maximal coupling of each refined slot's new draft with its previous draft; kept law = the new law "
            "(the draft's marginal); fresh slots are point masses; verification unchanged"))
register(Method(
    name="sjdpac", label="SJD-PAC", family=families.SJDPAC,
    summary="Jacobi + proactive K-ary tree + adaptive continuation · lossless", lossless=True,
    rule_knobs=("pac_width", "pac_depth"),
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
register(Method(
    name="zipar", label="ZipAR", family=zipar.ZipAR, summary="rows in parallel · no test · lossy context",
    lossless=False, rule_knobs=("zipar_w",),
    declares=(Knob("zipar_w", int, 8, 1, 64, symbol="w", quiet=True, label="ZipAR window w", ui="advanced",
                   step=1, help="ZipAR: row r + 1 starts once row r has w tokens (row 1 once row 0 is complete)"),),
    reading="ZipAR (He et al. 2025), released LlamaGen code: row 0 by AR, then one token per active row per forward; "
            "a new row's first input is a stand-in (the newest token of the row two above) at the end of the row "
            "above; every token is sampled from the target given the tokens decided before its forward"))
register(Method(
    name="pjd", label="PJD", family=pjd.PJD, summary="Jacobi per row, rows in parallel · lossless given its context",
    lossless=False, rule_knobs=("pjd_c", "window"),
    declares=(Knob("pjd_c", int, 8, 1, 64, symbol="c", quiet=True, label="PJD context threshold c", ui="advanced",
                   step=1, help="PJD: row r + 1 is active once row r has >= c committed tokens (c >= W: rows in "
                   "turn, SJD per row); each row's Jacobi window is --window"),),
    reading="PJD (CVPR 2026, no code): SJD's window per row under a row-causal mask, SJD's test per row; the top "
            "active row resamples its first rejection and takes the bonus, lower rows commit only accepted drafts; "
            "a row drafts only under committed tokens of the row above; a new row's first input is a stand-in"))
