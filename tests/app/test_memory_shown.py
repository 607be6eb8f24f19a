"""Memory shown: each lane header carries the peak measured for its run, the status line the device's
memory in use and the race's peak, worded by what is measured (CPU: the process's peak RSS; CUDA: the run's peak),
and an opened trace, which has no measurement, shows none."""
import re

import pytest

from specviz.analysis.cards import cards
from specviz.app.handlers import Handlers
from specviz.core import memory
from specviz.render import html
from specviz.render.lane_view import LaneView
from tests.support.apptools import knob_inputs, tiny_backend

METHODS = ["ar", "sjd"]
IN_USE, PEAK = 3 * 2**29, 2**30                       # 1.50 GiB, 1.00 GiB


def _text(fragment: str) -> str:
    return re.sub("<[^>]+>", "", fragment)


def _final(mp: pytest.MonkeyPatch) -> dict:
    mp.setattr(memory, "memory_in_use", lambda device=None: IN_USE)
    mp.setattr(memory, "peak_memory", lambda device=None: PEAK)
    h = Handlers(tiny_backend()[0])
    return list(h.generate(knob_inputs(METHODS, seed=5)))[-1]


def lanes_and_status_show_the_measured_peak():
    with pytest.MonkeyPatch.context() as mp:
        upd = _final(mp)
    for m in METHODS:
        assert _text(upd[f"stats_{m}"]).endswith("\u00a0s · process peak 1.00\u00a0GiB"), _text(upd[f"stats_{m}"])
    assert _text(upd["status"]).endswith(" s. · memory in use 1.50 GiB · process peak 1.00 GiB"), _text(upd["status"])
    return upd


def test_lane_headers_and_status_show_memory(tmp_path):
    upd = lanes_and_status_show_the_measured_peak()
    paths = []
    for m, t in upd["state"].traces.items():                  # an opened trace has no measurement: no figure
        t.save(tmp_path / f"{m}.json")
        paths.append(str(tmp_path / f"{m}.json"))
    opened = Handlers(tiny_backend()[0]).open_traces({"files": paths, "opacity": 1.0})
    for m in METHODS:
        assert opened[f"stats_{m}"] and "peak" not in _text(opened[f"stats_{m}"]), opened[f"stats_{m}"]
    assert "memory" not in _text(opened["status"]) and "peak" not in _text(opened["status"])


def test_cuda_wording_is_the_runs_peak():
    v = LaneView("ar", None, 3, 16, 16, True, 0.5, mem_peak=5 * 2**28, mem_cuda=True)
    assert _text(html.lane_stats(v, cards())).endswith("0.50\u00a0s · peak 1.25\u00a0GiB")
    line = _text(html.status(3, [v], True, 1.0, (2**30, 5 * 2**28, True)))
    assert line == "All done: 3 ticks of the common clock in 1.0 s. · memory in use 1.00 GiB · peak 1.25 GiB"
    assert "peak" not in _text(html.lane_stats(LaneView("ar", None, 3, 16, 16, True, 0.5), cards()))
    assert "memory" not in _text(html.status(3, [v], True, 1.0))


def lanes_show_the_engine_s_share_of_their_time():
    """A lane's seconds say how many were the engine's own (the rest were the target's forwards): 'engine X s' with X
    = seconds - forward seconds of the run (Progress.forward_seconds, the trace's summary at the end); an opened
    trace, which has no measurement, says nothing of it."""
    with pytest.MonkeyPatch.context() as mp:
        upd = _final(mp)
    for m, t in upd["state"].traces.items():
        s = t.summary
        text = _text(upd[f"stats_{m}"])
        got = float(re.search(r"engine\u00a0([0-9.]+)\u00a0s", text).group(1))
        lane_s = float(re.search(r"· ([0-9.]+)\u00a0s, engine", text).group(1))
        assert 0 < s["forward_seconds"] <= s["seconds"], s
        assert abs(got - (lane_s - s["forward_seconds"])) <= 0.0101, (m, text, s)     # two 2-decimal roundings
    v = LaneView("ar", None, 3, 16, 16, True, 0.5, forward_seconds=0.375)
    assert _text(html.lane_stats(v, cards())).endswith("0.50\u00a0s, engine\u00a00.12\u00a0s")
    assert "engine" not in _text(html.lane_stats(LaneView("ar", None, 3, 16, 16, True, 0.5), cards()))


def test_lanes_show_the_engine_s_share_of_their_time():
    lanes_show_the_engine_s_share_of_their_time()
