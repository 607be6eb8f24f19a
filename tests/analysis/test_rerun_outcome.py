"""After a slider re-run the Live preview tab shows, per method, the previous run, the preview's estimate for the new
knobs and what the re-run achieved — each number checked against the traces it describes."""
from functools import lru_cache

from specviz.analysis.preview import outcomes, rescore, tunable
from specviz.app.handlers import PREVIEWED, Handlers
from specviz.engine.registry import KnobValues
from tests.support.apptools import knob_inputs, tiny_backend

METHODS = ["ar", "sjd", "csd", "cascade"]
NEW = dict(lam=2.5, delta=0.9, tau_pos=0.6, tau_seq=0.7)


@lru_cache(maxsize=1)
def two_runs():
    """(first run's state, the re-run's final update) on the tiny model: λ 0.3 → 2.5 and δ, τ_pos, τ_seq moved."""
    h = Handlers(tiny_backend()[0])
    first = list(h.generate(knob_inputs(METHODS, seed=4)))[-1]["state"]
    final = list(h.rerun(knob_inputs(METHODS, seed=4, **NEW) | {"state": first}))[-1]
    return first, final


def rerun_table_states_prediction_and_result() -> None:
    """Every method's row: before = the first run's positions per forward, predicted = the first run's drafts
    re-scored at the new knobs (the preview's E[step compression]; a method the knobs do not tune: its first run, as
    the status line says), achieved = the re-run's positions per forward."""
    first, final = two_runs()
    table, new = final["preview_table"], final["state"]
    assert "Re-run: predicted vs achieved" in table
    moved = 0
    for m in METHODS:
        old, now = first.traces[m], new.traces[m]
        n = old.grid[0] * old.grid[1]
        pv = rescore(old, KnobValues.from_config(old.config, **NEW))
        before, achieved = n / len(old.steps), n / len(now.steps)
        predicted = pv.expected_compression if tunable(m) else before     # untuned: nothing moved for it
        row = (f"<tr><td>{m}</td><td>{before:.2f}×</td><td>{predicted:.2f}×</td>"
               f"<td><b>{achieved:.2f}×</b></td><td>{achieved - predicted:+.2f}×</td></tr>")
        assert row in table, m
        moved += f"{pv.expected_compression:.2f}" != f"{pv.baseline_compression:.2f}"
        moved += f"{achieved:.2f}" != f"{before:.2f}"
    assert moved >= 2                      # the knobs changed the estimate and the result: the rows can tell


def test_rerun_table_states_prediction_and_result():
    rerun_table_states_prediction_and_result()


def untuned_methods_are_predicted_at_their_previous_run() -> None:
    """A method the moved knobs do not tune (ar, sjd): predicted = before, as the status line says; a tuned one
    (csd, cascade): the estimate."""
    first, final = two_runs()
    rows = {o.method: o for o in outcomes(first.traces, final["state"].traces, PREVIEWED)}
    assert sorted(rows) == sorted(METHODS)
    for m, o in rows.items():
        if not tunable(m):
            assert o.predicted == o.before, m
        else:
            assert o.predicted == rescore(first.traces[m], KnobValues.from_config(
                first.traces[m].config, **NEW)).expected_compression, m


def test_untuned_methods_are_predicted_at_their_previous_run():
    untuned_methods_are_predicted_at_their_previous_run()


def test_no_prediction_for_another_prompt_or_a_first_run():
    first, final = two_runs()
    other = {m: t for m, t in final["state"].traces.items()}
    assert outcomes(first.traces, other, PREVIEWED)                          # same prompt, seed, model
    h = Handlers(tiny_backend()[0])
    reprompt = list(h.rerun(knob_inputs(METHODS, seed=4, prompt="a blue lake", **NEW) | {"state": first}))[-1]
    assert reprompt["preview_table"] == ""                                   # the preview was about another run
    fresh = list(h.rerun(knob_inputs(METHODS, seed=4, **NEW) | {"state": None}))[-1]
    assert fresh["preview_table"] == ""
    assert [o.method for o in outcomes(first.traces, {"csd": final["state"].traces["csd"]}, PREVIEWED)] == ["csd"]
