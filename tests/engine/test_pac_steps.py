"""scripts/pac_steps.py (docs/benchmarks.md, SJD-PAC's deep steps): a step is deep exactly when its walk went below
the root, i.e. it read twice (after the first step the propose reads nothing: its candidates ride in the walk's
reads), and the summary is the per-step counts' own mean, deep and shallow apart."""
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import pac_steps  # noqa: E402


def test_deep_steps_are_the_two_read_steps_and_the_means_are_theirs():
    for noise in ("papers", "keyed"):
        r = pac_steps.count(noise, 20, "tiny")
        reads = [c for c, _ in r["per"]]
        assert r["steps"] == 20 and set(reads) <= {1, 2} and r["reads_max"] == max(reads)
        deep = [o for c, o in r["per"] if c == 2]
        shallow = [o for c, o in r["per"] if c == 1]
        assert deep and shallow and r["deep_n"] == len(deep) and r["deep_max"] == max(deep)
        assert r["deep"] == statistics.mean(deep) and r["shallow"] == statistics.mean(shallow)
        assert r["ops"] == statistics.mean(o for _, o in r["per"]) and r["reads"] == statistics.mean(reads)
