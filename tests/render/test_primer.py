"""The primer's walk ("What am I looking at?") against the traces it describes: every number it writes is the
recorded one — the chosen draft's token, p(x), q(x), b, min(1, q/p) and u, the step's forward and its committed
count, what followed a rejection, the run's forwards, tokens and step compression, the relaxed count and the first
relaxed token's numbers — and no other number appears. Papers' and keyed noise; AR, lossless and relaxed methods."""
import functools
import re

import pytest

from specviz.app.configs import make_configs
from specviz.app.race import race
from specviz.render import primer
from specviz.render.verdict import first_change, num, verdict
from tests.support.apptools import tiny_backend


def _runs(noise: str) -> dict:
    _, slow, factory = tiny_backend(codes=16, grid=12)
    cfgs = make_configs(["ar", "sjd", "csd", "cascade", "lantern"], prompt="a red house", seed=1, noise=noise)
    return list(race(slow, factory, cfgs))[-1].traces


NOISES = ("papers", "keyed")


@functools.cache
def traces(noise: str) -> dict:
    """A noise's race, run on first use (not at import: collection and the mutation check stay quick)."""
    return _runs(noise)


def _where(t, pos):
    r, c = divmod(pos, t.grid[1])
    return f"position {pos} (row {r}, column {c})"


def expected(t) -> tuple[list[str], set[str]]:
    """The phrases the walk must contain and the numbers it may contain, from the trace alone."""
    judged = [(s, ev) for s, ev in t.events() if ev.decision in ("exact", "relaxed", "rejected")]
    if not judged:
        return [f"{t.method} made every token with its own target forward"], set()
    step, ev = next(((s, e) for s, e in judged if not e.point_mass), judged[0])
    events = t.steps[step].events
    kept = sum(e.commits for e in events)
    s = t.summary
    want = [f"Before target forward {step},", f"At {_where(t, ev.pos)} it guessed token {ev.token},",
            f"p(x) = {num(ev.p_draft)}", f"Target forward {step} read", f"q(x) = {num(ev.p_target)}",
            f"made {s['target_forwards']} target forwards for {len(t.tokens)} tokens",
            f"step compression {s['step_compression']:.2f}×"]
    nums = {str(step), str(ev.pos), str(ev.token), *re.findall(r"\d+", _where(t, ev.pos)), num(ev.p_draft),
            num(ev.p_target), str(s["target_forwards"]), str(len(t.tokens)), f"{s['step_compression']:.2f}", "1"}
    if ev.target_sample is not None:
        line = verdict(ev).line
        want.append(line)
        nums |= set(re.findall(r"\d+(?:\.\d+)?(?:e-?\d+)?", line))
    else:
        want += [f"b = {num(ev.accept_prob)} (lossless: min(1, q/p) = {num(ev.exact_prob)})", f"u = {num(ev.u)}",
                 f"This forward committed {kept} token(s)"]
        nums |= {num(ev.accept_prob), num(ev.exact_prob), num(ev.u), str(kept)}
        if ev.decision == "rejected":
            nxt = next((e for e in events[events.index(ev) + 1:] if e.pos == ev.pos), None)
            if nxt is not None:
                want.append(f"token {nxt.token}, was then")
                nums.add(str(nxt.token))
    relaxed = [e for _, e in t.events() if e.decision == "relaxed"]
    if relaxed:
        r = relaxed[0]
        want += [f"{len(relaxed)} guess(es) were kept only because", f"The first, at {_where(t, r.pos)}:",
                 f"b = {num(r.accept_prob)} where lossless had {num(r.exact_prob)}", f"u = {num(r.u)} fell",
                 f"(raised by {num(r.accept_prob - r.exact_prob)}, where",
                 f"normalised entropy was {num(r.entropy_norm)})", f"TV cost {num(r.tv_cost)}"]
        nums |= {str(len(relaxed)), str(r.pos), *re.findall(r"\d+", _where(t, r.pos)), num(r.accept_prob),
                 num(r.exact_prob), num(r.u), num(r.tv_cost), num(r.accept_prob - r.exact_prob),
                 num(r.entropy_norm)}
        grouped = next((e for e in relaxed if e.groups is not None), None)
        if grouped is not None:
            g = grouped.groups
            want += [f"At {_where(t, grouped.pos)}, token {grouped.token} was kept as one of a group: "
                     f"{len(g.interchangeable)} interchangeable", f"cosine similarity {num(g.similarity)})",
                     f"and {len(g.convergent)} convergent", f"moved {num(grouped.moved)} of the target's",
                     f"TV budget of {num(g.budget_left)} left"]
            nums |= {str(grouped.pos), *re.findall(r"\d+", _where(t, grouped.pos)), str(grouped.token),
                     str(len(g.interchangeable)), num(g.similarity), str(len(g.convergent)), num(grouped.moved),
                     num(g.budget_left)}
    else:
        want.append(f"No token of {t.method}'s run was accepted by relaxation")
    return want, nums


def test_a_group_forming_run_gets_the_groups_stage():
    """The tiny CASCADE run keeps a token through a group (else the groups sentence above is never checked)."""
    for runs in map(traces, NOISES):
        titles = [s.title for s in primer.walk(runs["cascade"])]
        assert "6. What the groups add" in titles
        assert "6. What the groups add" not in [s.title for s in primer.walk(runs["csd"])]


def walk_says_the_recorded_numbers():
    for noise, runs in zip(NOISES, map(traces, NOISES)):
        for m, t in runs.items():
            text = " ".join(s.text for s in primer.walk(t))
            want, nums = expected(t)
            for phrase in want:
                assert phrase in text, (noise, m, phrase, text)
            written = set(re.findall(r"(?<![\w.(])\d+(?:\.\d+)?(?:e-?\d+)?", text)) - {"1", "2", "3", "4", "5"}
            assert written <= nums | {"0"}, (noise, m, written - nums)


def test_the_walk_says_the_recorded_numbers():
    walk_says_the_recorded_numbers()


@pytest.mark.parametrize("noise", NOISES)
def test_the_primer_page_has_the_walk_and_every_term(noise):
    t = traces(noise)["csd"]
    page = primer.primer_html(t)
    for stage in primer.walk(t):
        assert stage.title in page
    for term, _ in primer.GLOSSARY:
        assert f"<b>{term}</b>" in page
    assert "Generate first" in primer.primer_html(None)


def keyed_stage_names_ar_only_where_true():
    """Stage 3 under keyed noise says the guess is compared with "AR's own token" only where that is true: the
    keyed draw x* equals AR's committed token at that position in the same race (else it names the run's own
    prefix). Every judged event of every method of the tiny keyed race."""
    runs = traces("keyed")
    ar = runs["ar"].tokens
    seen = set()
    for m, t in runs.items():
        for i, st in enumerate(t.steps):
            for ev in st.events:
                if ev.target_sample is None or ev.decision not in ("exact", "relaxed", "rejected"):
                    continue
                says_ar = "AR's own token here" in primer._decide(t, i, ev)
                if says_ar:
                    assert ev.target_sample == ar[ev.pos], (m, ev.pos)
                else:
                    assert ev.pos > first_change(t), (m, ev.pos)
                seen.add(says_ar)
    assert seen == {True, False}, seen                    # both readings met by the race


def test_keyed_stage_names_ar_only_where_true():
    keyed_stage_names_ar_only_where_true()
