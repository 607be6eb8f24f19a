"""The student's path: "What am I looking at?" — a walk through one verification step of a recorded run, in plain
words, every number read from the trace (the same numbers the inspector's verdict uses), and a glossary of the terms
on screen. Draws records only: no engine, no model."""
from __future__ import annotations

from dataclasses import dataclass
from html import escape

from specviz.core.records import JUDGED
from specviz.core.trace import Trace
from specviz.render.verdict import first_change, num, verdict

GLOSSARY = (
    ("AR (autoregressive)", "the image is made one token (one cell of the grid) at a time, each token sampled from "
                            "the target model given all the tokens before it: one target forward per token."),
    ("target forward", "one call of the big model. It gives the target law q for every position it reads; it is "
                       "the cost every method counts."),
    ("draft", "a guess of the next tokens, made cheaply (a small model, a tree head, or the previous iteration's "
              "guess), then checked by one target forward."),
    ("p and q", "p(x): the probability the drafter gave its guess x; q(x): the probability the target model gives "
                "x at the same position."),
    ("acceptance probability b", "the chance the guess is kept. Lossless rules use b = min(1, q/p); a uniform "
                                 "random number u below b accepts."),
    ("lossless", "accept with b = min(1, q/p) and, after a rejection, draw from the residual: the picture then "
                 "follows exactly the target's law, as if made by AR."),
    ("residual", "after a rejected guess the token is drawn from what q keeps beyond p, renormalised — the part of "
                 "the target's law the draft did not cover."),
    ("relaxation", "a rule that raises b above min(1, q/p) (CSD: λ·g(H) where the target is unsure; CASCADE: "
                   "groups of interchangeable tokens; LANTERN, GSD: nearby tokens): fewer forwards, a small "
                   "change of the law."),
    ("TV (total variation)", "how far two laws are apart: 0 = the same law, 1 = nothing in common. TV cost: how "
                             "far a relaxed rule moved the output law from q at that position."),
    ("step compression", "tokens per target forward: the image's token count divided by the forwards the method "
                         "made. AR is 1.00×; 2.00× means half the forwards."),
    ("keyed noise", "every method shares AR's random numbers per position, so a lossless method paints AR's very "
                    "image and a relaxed one shows exactly which tokens it changed."),
)


@dataclass(frozen=True)
class Stage:
    """One step of the walk: a heading and its plain-words text."""
    title: str
    text: str


def _where(trace: Trace, pos: int) -> str:
    r, c = divmod(pos, trace.grid[1])
    return f"position {pos} (row {r}, column {c})"


def walk(trace: Trace) -> list[Stage]:
    """The walk through the run's first judged draft (preferring a sampled draft, whose p is not 1), then what the
    whole run gained, then what the method's relaxation did (its first relaxed token) — or that it is lossless."""
    judged = [(s, ev) for s, ev in trace.events() if ev.decision in JUDGED]
    if not judged:
        return [Stage("No draft was judged", f"{trace.method} made every token with its own target forward (plain "
                                             "AR): nothing was guessed, so nothing was checked. Add a speculative "
                                             "method to see a verification step.")]
    step, ev = next(((s, e) for s, e in judged if not e.point_mass), judged[0])
    where = _where(trace, ev.pos)
    out = [Stage("1. A guess", f"Before target forward {step}, the drafter guessed several tokens at once. At "
                               f"{where} it guessed token {ev.token}, giving it probability p(x) = "
                               f"{num(ev.p_draft)}" + (" (a single fixed guess)." if ev.point_mass else ".")),
           Stage("2. One forward checks them all", f"Target forward {step} read all the guesses together and gave "
                                                   f"token {ev.token} the probability q(x) = {num(ev.p_target)}.")]
    out.append(Stage("3. Keep or reject", _decide(trace, step, ev)))
    s = trace.summary
    if s:
        out.append(Stage("4. What it buys", f"Over the whole picture {trace.method} made {s['target_forwards']} "
                                            f"target forwards for {len(trace.tokens)} tokens: step compression "
                                            f"{s['step_compression']:.2f}× (AR needs one forward per token)."))
    out.append(Stage("5. What the rule adds", _relaxation(trace)))
    grouped = next((e for _, e in trace.events() if e.decision == "relaxed" and e.groups is not None), None)
    if grouped is not None:
        out.append(Stage("6. What the groups add", _groups(trace, grouped)))
    return out


def _decide(trace: Trace, step: int, ev) -> str:
    """Stage 3 from the recorded numbers: b against u, and what the step's record shows happened next."""
    events = trace.steps[step].events
    kept = sum(1 for e in events if e.commits)
    exact = f"min(1, q/p) = {num(ev.exact_prob)}"
    if ev.target_sample is not None:                     # keyed noise: the verdict's own reading
        first = first_change(trace)                      # up to the run's first change, x* is AR's own token
        whose = ("AR's own token here" if first is None or ev.pos <= first else
                 "the keyed draw here given this run's own earlier tokens, which already differ from AR's")
        return f"Under keyed noise the test compares the guess with {whose}. {verdict(ev).line}"
    test = (f"The rule keeps the guess with probability b = {num(ev.accept_prob)} (lossless: {exact}). A uniform "
            f"random number u = {num(ev.u)} was drawn; ")
    done = f" This forward committed {kept} token(s)"
    if ev.decision != "rejected":
        how = "accepted" if ev.decision == "exact" else "accepted, though lossless would have rejected it"
        return (test + f"u is below b, so the guess was {how}." + done +
                ": more than one token for one forward is where the speed comes from.")
    after = events[events.index(ev) + 1:]
    nxt = next((e for e in after if e.pos == ev.pos), None)
    then = ("" if nxt is None else f" a replacement, token {nxt.token}, was then drawn from the residual;"
            if nxt.decision == "resampled" else f" the next guess at this position, token {nxt.token}, was then "
            "tried against what is left of q;")
    return test + f"u is not below b, so the guess was rejected;{then} guesses after this position wait for a " \
        f"later forward." + done + "."


def _relaxation(trace: Trace) -> str:
    relaxed = [(s, ev) for s, ev in trace.events() if ev.decision == "relaxed"]
    if not relaxed:
        return (f"No token of {trace.method}'s run was accepted by relaxation: every kept guess passed "
                "b = min(1, q/p), so this picture follows the target's law exactly (lossless).")
    _, ev = relaxed[0]
    return (f"{len(relaxed)} guess(es) were kept only because the rule raised b above min(1, q/p). The first, at "
            f"{_where(trace, ev.pos)}: b = {num(ev.accept_prob)} where lossless had {num(ev.exact_prob)} (raised "
            f"by {num(ev.accept_prob - ev.exact_prob)}, where the target's normalised entropy was "
            f"{num(ev.entropy_norm)}), and u = {num(ev.u)} fell between them. The price is a change of the law "
            f"there: TV cost {num(ev.tv_cost)}.")


def _groups(trace: Trace, ev) -> str:
    """Stage 6, for a method whose relaxation works over groups of candidates (its events carry `groups`): the first
    token such a group let through, with the group's recorded members, similarity, budget and moved mass."""
    g = ev.groups
    return (f"This method relaxes over groups of draft-tree candidates that look alike. At {_where(trace, ev.pos)}, "
            f"token {ev.token} was kept as one of a group: {len(g.interchangeable)} interchangeable candidate(s) "
            f"(the closest at cosine similarity {num(g.similarity)}) and {len(g.convergent)} convergent one(s). The "
            f"group moved {num(ev.moved)} of the target's probability onto it; the level had a TV budget of "
            f"{num(g.budget_left)} left before deciding.")


def primer_html(trace: Trace | None) -> str:
    """The walk for `trace` (None: how to get one) and the glossary, as one HTML fragment."""
    if trace is None:
        body = "<p><i>Generate first: the walk then follows one verification step of your run.</i></p>"
    else:
        body = f"<p>A walk through one step of <b>{escape(trace.method)}</b>'s run, from its recorded numbers.</p>"
        body += "".join(f"<h4>{escape(s.title)}</h4><p>{escape(s.text)}</p>" for s in walk(trace))
    terms = "".join(f"<dt><b>{escape(t)}</b></dt><dd>{escape(d)}</dd>" for t, d in GLOSSARY)
    return f"<div class='sv-primer'>{body}<h4>Glossary</h4><dl>{terms}</dl></div>"
