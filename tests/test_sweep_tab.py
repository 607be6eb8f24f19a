"""The app's Sweep tab logic on the shipped model: AR reference + grid points -> Pareto figure and table."""
from pathlib import Path

import pytest

from specviz.app import sweep_tab

HAVE_MODEL = (Path(__file__).resolve().parents[1] / "assets" / "target.safetensors").exists()


def test_bad_grid_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="parameter of csd"):
        sweep_tab.run_sweep("csd", "tau_pos", "0.5", 2, str(tmp_path))
    with pytest.raises(ValueError, match="1 to 6"):
        sweep_tab.run_sweep("csd", "lam", "1,2,3,4,5,6,7", 2, str(tmp_path))


@pytest.mark.skipif(not HAVE_MODEL, reason="assets/target.safetensors not trained yet")
def test_sweep_tab_runs_a_small_grid(tmp_path):
    seen = []
    fig, table = sweep_tab.run_sweep("csd", "lam", "0, 4", 2, str(tmp_path), lambda p, desc: seen.append(desc))
    assert [r[0] for r in table] == ["ar", "sjd", "csd lam=0", "csd lam=4"] and len(seen) == 4
    ar, sjd, lam0, lam4 = table
    assert ar[1] == 1.0 and lam4[1] >= lam0[1] and lam0[4] == 0 and sjd[4] == 0   # relaxation buys steps, costs TV
    assert lam4[4] > 0 and lam4[2] >= lam0[2] and fig.axes
