"""What the app draws from a CASCADE trace: group cells at the members' own positions, both
TVs and the budget in the inspector, the active reading of CASCADE's sets."""
import re
from html import escape

import pytest

from specviz.analysis import views
from specviz.analysis.cards import cards
from specviz.engine.groups import READINGS
from specviz.engine.registry import get
from specviz.render import html
from tests.support.toy import grp, run, toy


@pytest.fixture(scope="module")
def traces():
    model, factory = toy(codes=8, grid=4)
    kw = dict(method="cascade", tree_depth=3, tree_topk=3, tree_nodes=24, tau_pos=0.3, tau_seq=0.3, cascade_budget=0.2)
    return {sets: [run(model, factory, seed=s, cascade_sets=sets, **kw) for s in range(2)]
            for sets in ("paper", "siblings")}


def test_group_cells_put_members_at_their_positions(traces):
    seen = set()
    for t in traces["paper"]:
        for st in t.steps:
            pos_of = {r.node: r.pos for r in st.drafted}
            for ev in st.events:
                if ev.decision not in views.JUDGED:
                    continue
                for m in grp(ev).convergent:                       # one level up (the root too) or one level down
                    want = pos_of.get(m, ev.pos - ev.level)   # node 0, the root, sits before level 1
                    assert abs(want - ev.pos) == 1
                    seen.add(want - ev.pos)
        for c in views.group_cells(t):
            ev = [a.event for a in views.attempts(t, c.pos) if a.event.decision in views.JUDGED][-1]
            assert c.interchangeable == tuple(c.pos for _ in grp(ev).interchangeable)
            assert sorted(c.convergent) == sorted(c.pos + (1 if lv > ev.level else -1) for lv in
                                                  [r.level for r in grp(ev).siblings if r.node in grp(ev).convergent])
    assert seen == {-1, 1}, "the fixture should have convergent members above and below"


def test_inspector_shows_both_tvs_budget_and_reading(traces):
    for sets, ts in traces.items():
        t = ts[0]
        later = [(st, ev) for st in t.steps for ev in st.events if ev.decision in views.JUDGED
                 and abs(ev.tv - ev.tv_residual) > 1e-3]
        assert later, "a later sibling whose residual differs from q"
        for _, ev in later[:3]:
            key = [a.event for a in views.attempts(t, ev.pos) if a.event.decision in views.JUDGED][-1]
            out = html.inspector(t, ev.pos, cards())
            bars = dict(re.findall(r"<span class='sv-bl'>([^<]+)</span>.*?<span class='sv-bv'>([-0-9.e+]+)</span>",
                                   out))
            assert float(bars["TV(p, q)"]) == pytest.approx(key.tv, abs=1e-4)
            assert float(bars["TV(p, r)"]) == pytest.approx(key.tv_residual, abs=1e-4)
            assert float(bars["TV cost"]) == pytest.approx(key.tv_cost, abs=1e-4)
            assert f"δ = {grp(key).budget_left:.4f}" in out and f"s = {grp(key).scale:.4f}" in out
            if grp(key).siblings:
                assert f"Sets: {escape(sets + ' — ' + READINGS[sets])}" in out
    assert "paper reading" in get("cascade").reading and "--cascade-sets" in get("cascade").reading
