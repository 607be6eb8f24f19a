"""The app's Sweep tab logic on the shipped model: AR reference + grid points -> Pareto figure and table."""
from pathlib import Path

import pytest

from specviz.app import sweep_tab

HAVE_MODEL = (Path(__file__).resolve().parents[2] / "assets" / "target.safetensors").exists()


def test_bad_grid_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="parameter of csd"):
        sweep_tab.run_sweep("csd", "tau_pos", "0.5", 2, str(tmp_path))
    with pytest.raises(ValueError, match="1 to 6"):
        sweep_tab.run_sweep("csd", "lam", "1,2,3,4,5,6,7", 2, str(tmp_path))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_MODEL, reason="assets/target.safetensors not trained yet")
def test_sweep_tab_runs_a_small_grid(tmp_path):
    seen = []
    fig, table, points = sweep_tab.run_sweep("csd", "lam", "0, 4", 2, str(tmp_path),
                                             lambda p, desc: seen.append(desc))
    assert [r[0] for r in table] == ["ar", "sjd", "csd lam=0", "csd lam=4"] and len(seen) == 4
    assert points == [("ar", {}), ("sjd", {}), ("csd", {"lam": 0.0}), ("csd", {"lam": 4.0})]
    ar, sjd, lam0, lam4 = table
    assert ar[1] == 1.0 and lam4[1] >= lam0[1] and lam0[4] == 0 and sjd[4] == 0   # relaxation buys steps, costs TV
    assert lam4[4] > 0 and lam4[2] >= lam0[2] and fig.axes


def test_a_clicked_row_opens_its_point_in_the_race():
    """A row of the sweep table -> the controls: the point's knob values over the current ones, its method added to
    the selected ones (registry order); a point whose knob is no control of the race is refused with the command
    that runs it; a click without a sweep says so."""
    import gradio as gr
    points = [("ar", {}), ("sjd", {}), ("csd", {"lam": 4.0}), ("lantern", {"lantern_delta": 0.25})]
    knobs = {k: 0.5 for k in sweep_tab.OPENED}
    opened = sweep_tab.picked({"points": points, "methods": ["mcsjd", "ar"], "select": gr.SelectData(
        None, {"index": [2, 0], "value": "csd lam=4"}), **knobs})
    assert opened == {**knobs, "lam": 4.0, "methods": ["ar", "csd", "mcsjd"]}
    assert sweep_tab.open_point(points, 0, knobs, ["csd"]) == {**knobs, "methods": ["ar", "csd"]}
    with pytest.raises(ValueError, match="lantern_delta is not one of the race's controls; run this point with "
                                         "`python -m specviz generate --method lantern --lantern-delta 0.25`"):
        sweep_tab.open_point(points, 3, knobs, [])
    with pytest.raises(gr.Error, match="run a sweep first"):
        sweep_tab.picked({"points": [], "methods": [], "select": gr.SelectData(None, {"index": [0, 0], "value": ""}),
                          **knobs})
