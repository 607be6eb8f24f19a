"""The inspector's verdict line, checked against the recorded u and b of every event of every method: the stated
inequality is the true one, the printed numbers are the recorded ones (to their printed digits) and satisfy the
printed relation, the counterfactual is what lossless verification would have done with the same u, and no number
prints as a rounded zero. Detectors here are also the mutation check's (tests/mutation/mutants_verdict.py)."""
from __future__ import annotations

import math
import re
from functools import lru_cache

import torch

from specviz.analysis.cards import cards
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from specviz.engine.registry import METHODS
from specviz.render import verdict as vd
from tests.support.toy import toy

NUMBER = r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
WORDS = {"exact": "accepted exactly", "relaxed": "accepted by relaxation", "rejected": "rejected",
         "bonus": "Bonus token", "resampled": "Resampled", "ar": "Plain AR step"}


@lru_cache(maxsize=1)
def traces() -> tuple:
    """Every registered method on a 4x4 toy, two seeds, knobs that make every decision kind appear."""
    torch.set_num_threads(1)
    model, factory = toy(codes=12, grid=4, seed=5)
    out = []
    for m in METHODS:
        for seed in (0, 1):
            cfg = RunConfig(method=m, prompt="red house", seed=seed, lam=2.0, delta=0.9, tree_depth=3, tree_topk=3,
                            tree_nodes=8, tau_pos=0.3, tau_seq=0.3)
            out.append(drain(decode(model, cfg, factory)).trace)
    return tuple(out)


def _close(text: str, value: float) -> bool:
    """`text` is `value` rounded to the significant digits `text` shows."""
    if value == 0:
        return float(text) == 0
    digits = max(1, len(text.split("e")[0].lstrip("-").replace(".", "").lstrip("0")))
    return abs(float(text) - value) <= 0.5 * 10 ** (math.floor(math.log10(abs(value))) - digits + 1) * (1 + 1e-9)


def check_event(ev) -> None:
    v = vd.verdict(ev, "THE RELAXATION")
    text = v.text()
    assert WORDS[ev.decision] in text, (ev.decision, text)
    if ev.decision not in ("exact", "relaxed", "rejected"):
        assert f"token {ev.token}" in text
        return
    u, b, ex = ev.u, ev.accept_prob, ev.exact_prob
    if ev.decision == "exact":
        su, rel, sb = re.search(rf"u = {NUMBER} (<|≥) min\(1, q/p\) = (?:min\(1, [^)]*\) = )?{NUMBER}", v.line).groups()
        other = ex
    else:
        su, rel, sb = re.search(rf"u = {NUMBER} (<|≥) b = {NUMBER}", v.line).groups()
        other = b
    assert rel == ("<" if u < other else "≥"), (text, u, other)                 # the true inequality
    assert (float(su) < float(sb)) == (rel == "<"), text                          # printed numbers agree with it
    assert _close(su, u) and _close(sb, other), (text, u, other)                  # and are the recorded ones
    if ev.decision == "relaxed":
        su2, sx = re.search(rf"Lossless would have rejected: u = {NUMBER} ≥ q/p = {NUMBER}", v.counterfactual).groups()
        assert u >= ex and _close(sx, ex) and float(su2) >= float(sx), text
        assert "THE RELAXATION" in v.line
    if ev.decision == "rejected":
        assert ("Lossless would also have rejected" in v.counterfactual) == (b > ex), text
    if ev.decision == "exact" and ev.tv_cost > vd.COST_NOISE:
        assert vd.num(ev.tv_cost) in v.cost_note, text


def test_every_verdict_states_the_recorded_inequality():
    kinds = set()
    for t in traces():
        for _, ev in t.events():
            check_event(ev)
            kinds.add(ev.decision)
    assert kinds == set(WORDS)                                                     # every kind was checked


def test_no_number_prints_as_a_rounded_zero():
    assert vd.num(0.0043) == "0.0043" and vd.num(2.1e-5) == "2.1e-05" and vd.num(0) == "0" and vd.num(1.0) == "1"
    assert vd.pair(0.68121, 0.68124) == ("0.68121", "0.68124")
    zeros = 0
    for t in traces():
        for _, ev in t.events():
            text = vd.verdict(ev).text()
            for s in re.findall(rf"(?:= |/|min\(1, ){NUMBER}", text):             # every printed value
                if float(s) == 0:
                    zeros += 1
                    assert 0 in (ev.p_target, ev.p_draft, ev.u, ev.exact_prob, ev.accept_prob), text
    assert zeros < 50


def test_an_exact_accept_with_a_cost_says_whose_cost_it_is():
    found = 0
    for t in traces():
        for _, ev in t.events():
            if ev.decision == "exact" and ev.tv_cost > vd.COST_NOISE:
                note = vd.verdict(ev).cost_note
                assert ("sibling walk" in note) == (ev.parent >= 0), note
                found += 1
    assert found


def test_the_inspector_states_the_verdict_and_lists_group_members_only():
    from html import escape

    from specviz.analysis import views
    from specviz.engine import registry
    from specviz.render import html
    seen = set()
    for t in traces():
        rel = registry.get(t.method).relaxation or "the rule's relaxation"
        for pos in range(t.grid[0] * t.grid[1]):
            hist = views.attempts(t, pos)
            if not hist:
                continue
            judged = [a for a in hist if a.event.decision in ("exact", "relaxed", "rejected")]
            key = judged[-1] if judged else hist[-1]
            out = html.inspector(t, pos, cards())
            assert escape(vd.verdict(key.event, rel).text()) in out, (t.method, pos)
            final = [a for a in hist if a.event.decision not in ("rejected",)][-1]
            if final is not key:
                assert escape(vd.verdict(final.event).text()) in out
            if key.members:
                listed = out.count("</td></tr>", out.index("Group of node"))
                assert listed == max(1, sum(1 for m in key.members if m[6] or m[7]))
            seen.add(key.event.decision)
    assert {"exact", "relaxed", "rejected", "ar"} <= seen
