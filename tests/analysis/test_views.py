"""The trace views the app reads: per-position maps, CASCADE group cells, the replay's step views."""
import numpy as np

from specviz.analysis import views
from specviz.app.configs import make_configs
from specviz.app.race import race
from specviz.core.records import Groups
from tests.support.apptools import RACE_KW as KW


def test_views_maps_and_groups(race_toy):
    model, factory = race_toy
    frames = list(race(model, factory, make_configs(["ar", "csd", "cascade"], **KW), fps=1e9))
    traces = frames[-1].traces
    for _m, t in traces.items():
        for kind in ("entropy", "finalize", "tv_cost"):
            a = views.numeric_map(t, kind)
            assert a.shape == (4, 4) and np.isfinite(a).all()
        idx, rejected = views.decision_map(t)
        n_rej = sum(ev.decision == "rejected" for st in t.steps for ev in st.events)
        assert (n_rej == 0) == (not rejected.any())
    assert np.isnan(views.numeric_map(traces["ar"], "tv")).all()            # AR judges no drafts
    cells = views.group_cells(traces["cascade"])
    assert cells and all(c.pos in range(16) for c in cells)
    for c in cells:              # paper reading: I(n) at n's level = n's cell; C(n) one level up or down = next cells
        assert set(c.interchangeable) <= {c.pos} and set(c.convergent) <= {c.pos - 1, c.pos + 1}
        last = [a.event for a in views.attempts(traces["cascade"], c.pos) if a.event.decision in views.JUDGED][-1]
        g = last.groups or Groups()
        assert c.members == len(set(g.interchangeable) | set(g.convergent)) and c.node == last.node
    assert any(c.interchangeable or c.convergent for c in cells)


def test_step_view_accounts_for_every_commit(race_toy):
    model, factory = race_toy
    t = list(race(model, factory, make_configs(["csd"], **KW), fps=1e9))[-1].traces["csd"]
    total = 0
    for s in range(len(t.steps)):
        v = views.step_view(t, s)
        assert v.committed_before == total
        total = v.committed_after
        assert views.step_caption(t, v).startswith("csd · target forward")
    assert total == 16
