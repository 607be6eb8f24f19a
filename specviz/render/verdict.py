"""The inspector's verdict: one sentence per recorded event that says, from the recorded numbers alone, what decided
it — the inequality between the uniform u and the acceptance probability b, what b is made of (the lossless ratio
min(1, q/p) plus the rule's relaxation, named by the method's record), and the counterfactual (what lossless
verification would have done with the same u). Bonus, resampled and AR tokens are explained in words.

One precision rule for every number: `num` (4 significant digits, never a rounded 0 for a nonzero value), with more
digits where two compared numbers would otherwise print equal.
"""
from __future__ import annotations

from dataclasses import dataclass

COST_NOISE = 1e-6              # TV costs below this are float32 rounding of a zero cost: no sentence about them


def num(v: float, digits: int = 4) -> str:
    """A number with `digits` significant digits: 0.004321, 0.6812, 1, 2.1e-05 (never '0.0000' for a nonzero)."""
    return "0" if v == 0 else f"{v:.{digits}g}"


def pair(a: float, b: float) -> tuple[str, str]:
    """a and b printed with the fewest significant digits (≥ 4) at which unequal numbers print unequal."""
    for d in range(4, 18):
        sa, sb = num(a, d), num(b, d)
        if sa != sb or a == b:
            return sa, sb
    return repr(a), repr(b)


@dataclass(frozen=True)
class Verdict:
    """What the inspector writes for one event: the deciding sentence and, where it applies, the counterfactual
    and a note on the event's TV cost."""
    line: str
    counterfactual: str = ""
    cost_note: str = ""

    def text(self) -> str:
        return " ".join(x for x in (self.line, self.counterfactual, self.cost_note) if x)


def verdict(ev, relaxation: str = "the rule's relaxation") -> Verdict:
    """The verdict on one TokenEvent. `relaxation` names what the method's rule adds to q/p (from its record)."""
    q = num(ev.p_target)
    if getattr(ev, "target_sample", None) is not None:
        return _keyed(ev, relaxation)
    if ev.decision == "ar":
        return Verdict(f"Plain AR step: token {ev.token} sampled from the target law q (q(x) = {q}); nothing judged.")
    if ev.decision == "bonus":
        return Verdict(f"Bonus token: every draft before it in this step was accepted, so token {ev.token} was "
                       f"sampled from the target law q at this position for free (q(x) = {q}).")
    if ev.decision == "resampled":
        return Verdict(f"Resampled: the draft here was rejected, so token {ev.token} was drawn from the residual "
                       f"law — what q keeps beyond the rejected draft's law, renormalised (q(x) = {q}).",
                       cost_note=_cost_note(ev))
    return _judged(ev, relaxation)


def _judged(ev, relaxation: str) -> Verdict:
    u, b, ex = ev.u, ev.accept_prob, ev.exact_prob
    ratio = f"min(1, q/p) = min(1, {num(ev.p_target)}/{num(ev.p_draft)}) = {num(ex)}"
    if ev.decision == "rejected":
        su, sb = pair(u, b)
        made = f"b = {ratio}" if b <= ex else f"b = {sb}: {ratio} raised by {relaxation}"
        return Verdict(f"u = {su} ≥ b = {sb} → rejected ({made}).",
                       "Lossless would also have rejected." if b > ex else "")
    if ev.decision == "exact":
        su, sx = pair(u, ex)
        return Verdict(f"u = {su} < {ratio.rsplit(' = ', 1)[0]} = {sx} → accepted exactly (no relaxation needed).",
                       cost_note=_cost_note(ev))
    su, sb = pair(u, b)
    _, sx = pair(u, ex)
    return Verdict(f"u = {su} < b = {sb} → accepted by relaxation (b = {ratio} raised by {relaxation}).",
                   f"Lossless would have rejected: u = {su} ≥ q/p = {sx}.", _cost_note(ev))


def _keyed(ev, relaxation: str) -> Verdict:
    """Keyed noise (docs/methods.md §9): a draft is accepted iff it is the target's keyed sample x*, or, when it
    misses, by the relaxation's excess c = (b − e)/(1 − e) on its keyed uniform; a sampled token is x* itself."""
    star, q = ev.target_sample, num(ev.p_target)
    if ev.decision in ("ar", "bonus", "resampled"):
        how = {"ar": "Plain AR step", "bonus": "Bonus token after an accepted draft",
               "resampled": "Resampled after the draft here was rejected"}[ev.decision]
        return Verdict(f"{how}: token {ev.token} is the target's keyed sample x* here (the race of q at this "
                       f"position, q(x) = {q}), the token AR draws given this prefix.", cost_note=_cost_note(ev))
    coupled = "" if ev.coupled_prob is None else (f" Coupled acceptance J/p = {num(ev.coupled_prob)} (the papers' "
                                                  f"min(1, q/p) = {num(ev.exact_prob)}).")
    if ev.token == star:
        return Verdict(f"Draft {ev.token} equals the target's keyed sample x* = {star} → accepted; AR draws the "
                       f"same token here given this prefix.{coupled}", cost_note=_cost_note(ev))
    e, b = ev.exact_prob, ev.accept_prob
    c = (b - e) / (1 - e) if e < 1 and b > e else 0.0
    chance = f"c = (b − e)/(1 − e) = ({num(b)} − {num(e)})/(1 − {num(e)}) = {num(c)}"
    if ev.decision == "relaxed":
        su, sc = pair(ev.u, c)
        return Verdict(f"Draft {ev.token} ≠ x* = {star}, accepted by {relaxation}: u = {su} < {chance[:-len(num(c))]}"
                       f"{sc}.", f"AR, given this prefix and the same keyed noise, would have drawn token {star} here.",
                       _cost_note(ev))
    tail = f"; {relaxation} gave it no chance (c = 0)" if c <= 0 else f"; u = {num(ev.u)} ≥ {chance}"
    return Verdict(f"Draft {ev.token} ≠ the target's keyed sample x* = {star} → rejected{tail}.{coupled}")


def plain(ev, first: int | None = None) -> str:
    """The inspector's first line: what happened at this cell in plain words, before the expert verdict. The only
    numbers are the recorded ones the verdict also gives (b and u as percentages, the tokens; under keyed noise the
    keyed draw x*, and b, min(1, q/p), J/p and the relaxation's chance c). `first`: the run's first changed
    position (first_change) — up to it the run's earlier tokens are AR's, so x* is AR's own token there."""
    t = ev.token
    if ev.decision == "ar":
        return f"In plain words: the model drew token {t} here itself — one forward for this token, no guess to check."
    if ev.decision == "bonus":
        return (f"In plain words: every guess before this cell in the same forward was kept, so that forward also "
                f"gave token {t} here at no extra cost.")
    if ev.decision == "resampled":
        return f"In plain words: the guess here was thrown away, and the model drew token {t} in its place."
    if ev.target_sample is not None:
        return _plain_keyed(ev, first)
    su, sb = pair(100 * ev.u, 100 * ev.accept_prob)
    kept = "thrown away" if ev.decision == "rejected" else "kept"
    line = (f"In plain words: the guess here was token {t}; the rule gave it a {sb} % chance of being kept, the "
            f"random draw came up {su} %, so it was {kept}.")
    if ev.decision == "relaxed":
        _, sx = pair(100 * ev.u, 100 * ev.exact_prob)
        line += f" Checked losslessly its chance would have been {sx} %, and it would have been thrown away."
    return line


def excess(b: float, e: float) -> float:
    """The keyed relaxation's chance c = (b − e)/(1 − e) in [0, 1], 0 where e = 1 (core.sampling.relax_excess)."""
    return min(1.0, max(0.0, (b - e) / (1 - e))) if e < 1 else 0.0


def first_change(trace) -> int | None:
    """The first position whose committed token is not the model's keyed draw x* there (None: none, or papers'
    noise). Before it every committed token is x* given AR's own earlier tokens, i.e. AR's token (docs/methods.md
    §9), so up to and at it x* is what AR drew; after it x* is the draw given this run's own, changed prefix."""
    com = trace.committing()
    return next((p for p in sorted(com) if com[p][1].target_sample is not None
                 and com[p][1].token != com[p][1].target_sample), None)


def deciding(ev) -> str:
    """Which recorded number decided a judged keyed event: 'b' when the draft missed x* and the relaxation had a
    chance c > 0 (c comes from b's excess over min(1, q/p)), else 'J/p' (only a match could keep it; J/p is the
    chance of one). min(1, q/p) alone never decides under keyed noise: it is the lossless part c is measured from."""
    return "b" if ev.token != ev.target_sample and excess(ev.accept_prob, ev.exact_prob) > 0 else "J/p"


def _plain_keyed(ev, first: int | None) -> str:
    """Keyed noise, a judged draft: who drew what here, what kept or dropped the guess, and the deciding number."""
    t, star, b, e = ev.token, ev.target_sample, ev.accept_prob, ev.exact_prob
    c = excess(b, e)
    if first is None or ev.pos <= first:
        draw, it = f"AR drew token {star} here", "AR's token"
    else:
        draw, it = (f"this run's tokens differ from AR's from position {first} on, so token {star} is the model's "
                    f"keyed draw here given this run's own earlier tokens (AR's own token here is not known from "
                    f"this run)"), "that draw"
    jp = "J/p" if ev.coupled_prob is None else f"J/p = {num(ev.coupled_prob)}"
    why = {"b": f"b — b = {num(b)} over min(1, q/p) = {num(e)} leaves c = (b − e)/(1 − e)",
           "J/p": f"{jp}, the chance a guess matches {it}"}
    name = deciding(ev)
    decided = f"Deciding number: {why.get(name, name)}."
    if t == star:
        return f"In plain words: {draw}; the guess, token {t}, is {it}, so it was kept. {decided}"
    if ev.decision == "relaxed":
        su, sc = pair(ev.u, c)
        return (f"In plain words: {draw}; this method kept its draft, token {t}, instead, because its relaxation "
                f"accepted it with chance c = {sc} (its keyed draw u = {su} < c), so the picture differs from "
                f"{it} here. {decided}")
    if c <= 0:
        return (f"In plain words: {draw}; the guess, token {t}, is not {it}, and the relaxation gave it no chance "
                f"(b = {num(b)} has no excess over min(1, q/p) = {num(e)}: c = 0), so it was thrown away. "
                f"{decided}")
    su, sc = pair(ev.u, c)
    return (f"In plain words: {draw}; the guess, token {t}, is not {it}; its relaxation would have kept it with "
            f"chance c = {sc}, but its keyed draw u = {su} ≥ c, so it was thrown away. {decided}")


def _cost_note(ev) -> str:
    """Why an exact or resampled token carries a TV cost: the cost belongs to the position's output law, which the
    rule's relaxation changed whichever token was drawn (trees: the level's whole sibling walk)."""
    if ev.tv_cost <= COST_NOISE or ev.decision == "relaxed":
        return ""
    tree = ev.parent >= 0 or (ev.decision == "resampled" and ev.node < 0)     # tree nodes know their parent
    whose = ("this level's whole sibling walk (a sibling's relaxation moved mass)" if tree
             else "this position's output law under the relaxed rule")
    return f"Its TV cost {num(ev.tv_cost)} is that of {whose}, not of this token."


def context_line(seen) -> str:
    """Which raster context a token's forward saw (an analysis/context.Seen): complete rows as ranges, then each
    other row up to the column it saw from column 0 ("row 5 up to column 11"), or how many of its columns, then the
    positions missing ("rows 0–4 complete, row 5 up to column 11: 13 positions missing")."""
    parts, run = [], []
    for i, cols in enumerate(seen.rows):
        limit = seen.width if i < seen.row else seen.col
        if i < seen.row and len(cols) == limit:
            run.append(i)
            continue
        if run:
            parts.append(_rows(run))
            run = []
        if limit == 0:
            continue
        if cols == tuple(range(len(cols))) and cols:
            parts.append(f"row {i} up to column {len(cols) - 1}")
        else:
            parts.append(f"row {i}: {len(cols)} of {limit} columns")
    if run:
        parts.append(_rows(run))
    n = seen.missing
    said = ", ".join(parts) if parts else "nothing before it"
    return f"Context seen: {said}: {'no' if n == 0 else n} position{'' if n == 1 else 's'} missing."


def _rows(run: list[int]) -> str:
    return f"row {run[0]} complete" if len(run) == 1 else f"rows {run[0]}–{run[-1]} complete"
