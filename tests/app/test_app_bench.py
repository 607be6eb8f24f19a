"""The tuning bench's words, checked against the runs they describe: each lane header carries its run's knob values
(the value the box showed: a clamped one included), the status's predicted-vs-achieved line states the same numbers
as analysis.preview.outcomes, and the History row of the re-run carries the same knob values as its trace."""
import re
from functools import lru_cache

from specviz.analysis import history as hist
from specviz.analysis.cards import cards
from specviz.analysis.preview import outcomes, rescore
from specviz.app.handlers import PREVIEWED, Handlers
from specviz.engine.registry import KnobValues
from specviz.render import html, knob_text
from specviz.render.lane_view import LaneView
from tests.support.apptools import knob_inputs, tiny_backend

METHODS = ["ar", "sjd", "csd", "cascade"]
CLAMPED = dict(lam=10.0, delta=1.0)            # what the page sends after 1e9 and 2 were typed (app/pinned.py clamps)


@lru_cache(maxsize=1)
def two_runs():
    h = Handlers(tiny_backend()[0])
    first = list(h.generate(knob_inputs(METHODS, seed=4)))[-1]["state"]
    final = list(h.rerun(knob_inputs(METHODS, seed=4, **CLAMPED) | {"state": first}))[-1]
    return first, final


def _text(fragment: str) -> str:
    return re.sub("<[^>]+>", "", fragment)


def _stats(final: dict, m: str) -> str:
    """The lane's counters as drawn now (the cached run's trace through render/html.py: a mutant applies)."""
    t = final["state"].traces[m]
    n = t.grid[0] * t.grid[1]
    return html.lane_stats(LaneView(m, None, len(t.steps), n, n, True, 0.0, config=t.config, grid=tuple(t.grid)),
                           cards())


def lane_headers_carry_the_knobs_of_their_run() -> None:
    _, final = two_runs()
    for m in METHODS:
        t = final["state"].traces[m]
        shown = re.search(r"<div class='sv-knobs'>(.*?)</div>", _stats(final, m)).group(1)
        want = " · ".join(f"{s} {v:g}" for s, v in knob_text.knob_values(m, t.config, cards())) or "no knobs"
        assert _text(shown) == want, m
    csd = _text(re.search(r"<div class='sv-knobs'>(.*?)</div>", _stats(final, "csd")).group(1))
    assert csd == "λ 10 · δ 1" and final["state"].traces["csd"].config["lam"] == 10.0


def outcome_line_states_before_predicted_achieved() -> None:
    """Each tuned method: before = the first run's positions per forward, predicted = its drafts re-scored at the new
    knobs, achieved = the re-run's; the untuned ones: achieved only."""
    first, final = two_runs()
    line = knob_text.outcome_line(outcomes(first.traces, final["state"].traces, PREVIEWED), cards())
    assert "id='sv-outcome'" in line
    for m in METHODS:
        old, now = first.traces[m], final["state"].traces[m]
        n = old.grid[0] * old.grid[1]
        before, achieved = n / len(old.steps), n / len(now.steps)
        if m in ("csd", "cascade"):
            pv = rescore(old, KnobValues.from_config(old.config, **{k: now.config[k] for k in
                                                                    ("lam", "delta", "tau_pos", "tau_seq")}))
            assert f"{m} {before:.2f}× → {pv.expected_compression:.2f}× → <b>{achieved:.2f}×</b>" in line, m
        else:
            assert f"<span class='sv-kv'>{m} {achieved:.2f}×</span>" in line, m


def history_row_agrees_with_the_box() -> None:
    _, final = two_runs()
    row = hist.row_of(final["state"].traces["csd"], 2, "rerun")
    assert (row.lam, row.delta) == (CLAMPED["lam"], CLAMPED["delta"])


def test_lane_headers_carry_the_knobs_of_their_run():
    lane_headers_carry_the_knobs_of_their_run()
    _, final = two_runs()
    for m in METHODS:                                   # the streamed update drew the same counters
        assert final[f"stats_{m}"].split("<span class='sv-kind'>")[0] == _stats(final, m).split(
            "<span class='sv-kind'>")[0], m


def test_outcome_line_states_before_predicted_achieved():
    outcome_line_states_before_predicted_achieved()
    first, final = two_runs()
    rows = outcomes(first.traces, final["state"].traces, PREVIEWED)
    assert final["status"].endswith(knob_text.outcome_line(rows, cards()))


def test_history_row_agrees_with_the_box():
    history_row_agrees_with_the_box()
