"""The keyed inspector's plain line on the cells that changed against AR (docs/methods.md §9), checked against real
keyed races — the tiny backend's and the shipped scenes model's: up to and at the run's first departure from AR it
says "AR drew token N here" with N = AR's own trace's token there; after it, that the draw follows this run's own
earlier tokens (and names no AR token); a relaxed keep states its chance c = (b − e)/(1 − e) from the event's b and
min(1, q/p) (core.sampling.relax_excess agrees) with its keyed draw u below it; and it names the number that decided:
b when the draft missed x* and the relaxation had a chance, else J/p (a match). Every number it writes is recorded."""
from __future__ import annotations

import re
from html import escape
from pathlib import Path

import pytest
import torch

from specviz.analysis import paired, views
from specviz.analysis.cards import cards
from specviz.core.sampling import relax_excess
from specviz.render import html, verdict
from specviz.render.verdict import num, pair
from tests.render.test_primer import traces

HAVE_MODEL = (Path(__file__).resolve().parents[2] / "assets" / "target.safetensors").exists()


def says_what_is_true(traces: dict) -> dict:
    """Checks every changed cell of every keyed trace in `traces` against the race's AR trace; returns counts of what
    was seen (decision and whether the cell lies after the first departure)."""
    ar, seen = traces["ar"], {}
    for m, t in traces.items():
        if m == "ar" or paired.comparable(t, ar) is not None:
            continue
        p = paired.compare(t, ar)
        assert verdict.first_change(t) == p.first, m          # the trace alone finds AR's first departure
        for pos in p.changed:
            hist = views.attempts(t, pos)
            judged = [a for a in hist if a.event.decision in views.JUDGED]
            if not judged:
                continue
            ev = judged[-1].event
            text = verdict.plain(ev, verdict.first_change(t))
            assert escape(text) in html.inspector(t, pos, cards()), (m, pos)
            _check(ev, text, pos <= p.first, ar.tokens[pos], p.first, (m, pos))
            key = (ev.decision, pos > p.first)
            seen[key] = seen.get(key, 0) + 1
    return seen


def _check(ev, text: str, before: bool, ar_token: int, first: int, where) -> None:
    b, e, star = ev.accept_prob, ev.exact_prob, ev.target_sample
    c = verdict.excess(b, e)
    assert c == pytest.approx(float(relax_excess(torch.tensor(b), torch.tensor(e))), abs=1e-6), where
    nums = {str(ev.token), str(star), str(first), num(b), num(e), "1"}
    if ev.coupled_prob is not None:
        nums.add(num(ev.coupled_prob))
    if before:
        assert star == ar_token, where                          # what the sentence claims, against AR's own trace
        assert text.startswith(f"In plain words: AR drew token {ar_token} here;"), (where, text)
    else:
        assert "AR drew" not in text and f"from position {first} on, so token {star} is the model's keyed draw here" \
            in text, (where, text)
    jp = f"J/p = {num(ev.coupled_prob)}" if ev.coupled_prob is not None else "J/p,"
    by_b = f"Deciding number: b — b = {num(b)} over min(1, q/p) = {num(e)} leaves c = (b − e)/(1 − e)."
    if ev.token == star:                                        # a match: kept whatever b is
        assert ev.decision == "exact" and f"Deciding number: {jp}" in text and "kept" in text, (where, text)
    elif ev.decision == "relaxed":
        su, sc = pair(ev.u, c)
        assert 0 <= ev.u < c, where                             # the recorded draw did fall under the chance
        assert f"kept its draft, token {ev.token}, instead, because its relaxation accepted it with chance c = {sc} " \
               f"(its keyed draw u = {su} < c)" in text and text.endswith(by_b), (where, text)
        nums |= {su, sc}
    else:
        assert ev.decision == "rejected" and "thrown away" in text, (where, text)
        if c > 0:
            su, sc = pair(ev.u, c)
            assert ev.u >= c and f"chance c = {sc}, but its keyed draw u = {su} ≥ c" in text, (where, text)
            assert text.endswith(by_b), (where, text)
            nums |= {su, sc}
        else:
            assert f"Deciding number: {jp}" in text and "c = 0" in text, (where, text)
            nums.add("0")
    written = set(re.findall(r"\d+(?:\.\d+)?(?:e-?\d+)?", text))
    assert written <= nums, (where, written - nums, text)


def tiny_keyed_race_says_what_is_true() -> dict:
    """Detector (tests/mutation/mutants_plain.py): the tiny backend's keyed race of ar, sjd, csd, cascade, lantern."""
    seen = says_what_is_true(traces("keyed"))
    assert seen.get(("relaxed", False)) and seen.get(("relaxed", True)) and seen.get(("exact", True)), seen
    return seen


def test_the_tiny_keyed_race():
    tiny_keyed_race_says_what_is_true()


@pytest.mark.slow                                          # three races on the shipped model: ~30 s
@pytest.mark.skipif(not HAVE_MODEL, reason="assets/target.safetensors not trained yet")
def test_the_scenes_models_keyed_race():
    """AR, CSD (sampled chain drafts: J/p ≠ min(1, q/p)) and LANTERN (point-mass tree drafts) on the shipped model."""
    # the engine and the model only for this test's own races
    from specviz.engine.config import RunConfig
    from specviz.models import load_model
    from specviz.models.runner import run
    torch.set_num_threads(1)
    model = load_model("scenes", "cpu")
    base = dict(model="scenes", prompt="a red house by a lake", seed=3, noise="keyed")
    traces = {m: run(RunConfig(method=m, **base), model=model) for m in ("ar", "csd", "lantern")}
    seen = says_what_is_true(traces)
    assert seen.get(("relaxed", False)) and seen.get(("relaxed", True)), seen
    assert any(ev.coupled_prob != pytest.approx(ev.exact_prob, abs=1e-4)
               for _, ev in traces["csd"].events() if ev.coupled_prob is not None)
