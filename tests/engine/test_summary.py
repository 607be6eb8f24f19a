"""The run summary's cost numbers and how the app names them (docs/methods.md §7)."""
import math

from specviz.analysis.cards import cards
from specviz.core.records import TokenEvent
from specviz.engine import explain
from specviz.engine.summary import summarize
from specviz.render import html
from tests.support.toy import run, toy

JUDGED = ("exact", "relaxed", "rejected")


def _judged_positions(trace):
    """Independent count: positions where a rule judged a draft in the step that committed the position."""
    out = {}
    for st in trace.steps:
        committed = {e.pos for e in st.events if e.commits}
        for e in st.events:
            if e.decision in JUDGED and e.pos in committed:
                out.setdefault(e.pos, []).append(e)
    return out


def test_summary_costs_and_bound():
    model, factory = toy(codes=6, grid=3, seed=2, sharpen=1.0)
    lam, delta = 0.5, 0.9
    t = run(model, factory, method="csd", window=4, lam=lam, delta=delta, seed=3)
    s = summarize(t, 0.0)
    judged = _judged_positions(t)
    committed = t.committing()
    total = sum(ev.tv_cost for _, ev in committed.values())
    assert s["tv_cost"] == round(total, 4) and s["judged_positions"] == len(judged) > 0
    assert abs(s["tv_cost_mean"] - total / len(judged)) < 1e-6
    promise = sum(min(e.tv, lam * e.entropy_norm) if e.tv < delta else 0.0 for evs in judged.values() for e in evs)
    assert abs(s["tv_bound"] - promise) < 1e-4
    for pos, evs in judged.items():                     # the rule keeps its promise at every position
        cost = committed[pos][1].tv_cost
        assert cost <= sum(min(e.tv, lam * e.entropy_norm) if e.tv < delta else 0.0 for e in evs) + 1e-6
    sjd = summarize(run(model, factory, method="sjd", window=4, seed=3), 0.0)
    assert sjd["tv_cost"] == 0 and sjd["tv_bound"] == 0.0
    gsd = summarize(run(model, factory, method="gsd", window=4, gsd_mode="released", seed=3), 0.0)
    assert gsd["tv_bound"] is None                      # released GSD promises nothing


def test_summary_table_names_the_sum_and_reads_old_traces():
    assert "Σ per-token TV cost (bound on the image's TV)" in html.SUMMARY_HEADERS
    model, factory = toy()
    t = run(model, factory, method="csd", window=3)
    summarize(t, 0.0)
    for k in ("tv_cost_mean", "tv_bound", "judged_positions"):
        del t.summary[k]                                # a trace saved before these numbers existed
    row = html.summary_rows({"csd": t})[0]
    assert len(row) == len(html.SUMMARY_HEADERS) and row[7] == "—" and row[8] == "—"


def test_summary_counts_implausible_codes_from_the_target_law(monkeypatch):
    """The summary's implausible column: committed tokens whose TARGET probability is below the threshold, counted
    here from the raw step events (at a threshold chosen from the data so that the count is neither 0 nor all)."""
    import numpy as np

    from specviz.core import trace as trace_mod
    model, factory = toy(codes=6, grid=3, seed=2, sharpen=1.0)
    t = run(model, factory, method="csd", window=4, lam=2.0, delta=0.95, seed=3)
    summarize(t, 0.0)
    q = [e.p_target for st in t.steps for e in st.events if e.commits]
    d = [e.p_draft for st in t.steps for e in st.events if e.commits]
    assert len(q) == 9
    cut = next(float(c) for c in np.quantile(q, np.linspace(0.2, 0.8, 13))      # target and draft counts differ
               if sum(x < c for x in q) != sum(x < c for x in d))
    monkeypatch.setattr(trace_mod, "IMPLAUSIBLE_Q", cut)
    col = html.SUMMARY_HEADERS.index("implausible codes (target q < 0.001)")
    assert html.summary_rows({"csd": t})[0][col] == sum(x < cut for x in q)
    assert 0 < sum(x < cut for x in q) < 9


def test_inspector_converts_csd_lambda_to_nats():
    """λ = 4 per unit of H/log|supp q| on 512 codes is 4/log 512 = 0.641 per nat."""
    h = 3.0
    ev = TokenEvent(pos=0, token=1, decision="relaxed", entropy=h, entropy_norm=h / math.log(512), tv=0.5)
    text = explain.csd_explain({"lam": 4.0, "h_norm": "support", "delta": 0.95}, ev)
    assert "0.641 per nat" in text and "|supp q| = 512" in text and f"= {4 * h / math.log(512):.4f}" in text
    assert "per nat (--h-norm raw)" in explain.csd_explain({"lam": 4.0, "h_norm": "raw"}, ev)
    assert "gate closed" in explain.csd_explain({"lam": 4.0, "h_norm": "support", "delta": 0.4}, ev)


def test_inspector_says_which_reading_ran():
    text = html.reading("gsd", {"gsd_mode": "released"}, cards())
    assert "--gsd-mode released" in text and "GSD" in text
    assert "--lantern-residual llamagen" in html.reading("lanternpp", {"lantern_residual": "llamagen"}, cards())
    assert html.reading("sjd", {}, cards()) == "" and html.reading("nope", {}, cards()) == ""


def test_summary_and_history_show_the_same_step_compression():
    """256 tokens in 124 forwards is 2.0645...: both tables say 2.065 (rounding the summary's 4-place 2.0645 again
    said 2.064 in the Summary tab while History said 2.065)."""
    from specviz.analysis import history
    model, factory = toy()
    t = run(model, factory, method="csd", window=3)
    t.summary.update(tokens=256, target_forwards=124, step_compression=round(256 / 124, 4))
    shown = html.summary_rows({"csd": t})[0][2]
    col = history.Row.HEADERS.index("step compression")
    assert shown == history.row_of(t, 1, "generate").cells()[col] == 2.065
