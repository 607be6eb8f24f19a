"""The app end to end through gradio_client (in-process server, tiny injected model), plus its cheap handlers."""
import time

import gradio as gr
import numpy as np
import pytest
from gradio_client import Client
from gradio_client.utils import Status
from PIL import Image

import app
from specviz.analysis import views
from specviz.analysis.cards import cards
from specviz.analysis.patches import patches
from specviz.app.configs import make_configs
from specviz.app.follow import Cell
from specviz.app.handlers import GEN_INPUTS, GEN_OUTPUTS, Handlers, RunState
from specviz.app.race import race
from specviz.engine.config import RunConfig
from specviz.models.runner import run
from specviz.render import draw, panels
from tests.support.apptools import (
    knob_args,
    knob_inputs,
    module_gradio_tmp,  # noqa: F401 (fixture)
    tiny_backend,
)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    backend, slow, factory = tiny_backend()
    demo = app.build_demo(backend, fps=1000, api_fps=1000, export_root=str(tmp_path_factory.mktemp("exports")))
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True)
    client = Client(url, verbose=False)
    yield client, slow
    client.close()
    demo.close()


def out(values, name):
    return values[GEN_OUTPUTS.index(name)]


def test_generate_streams_and_matches_the_engine(served):
    client, slow = served
    args = knob_args(["csd", "ar"])
    job = client.submit(*args, api_name="/generate")
    updates = list(job)
    assert job.status().code == Status.FINISHED
    assert len(updates) >= 5                                             # streamed, not one final answer
    final = job.outputs()[-1]
    knobs = dict(zip(GEN_INPUTS, args, strict=False))
    table = out(final, "summary")
    rows = {r[0]: r for r in table["data"]}
    assert list(rows) == ["ar", "csd"]
    for m in ("ar", "csd"):
        cfg = RunConfig(method=m, **{k: v for k, v in knobs.items() if k not in ("methods",)})
        trace = run(cfg, model=slow.inner)
        s = trace.summary
        want = panels.race_frame(slow.inner.decode_image(trace.tokens), np.ones((4, 4), bool), (4, 4))
        got = Image.open(out(final, f"img_{m}")).convert("RGB")
        assert np.array_equal(np.asarray(got), np.asarray(want)), m
        r = rows[m]
        assert r[1] == s["target_forwards"] and r[2] == pytest.approx(s["step_compression"], abs=1e-3)
        assert r[3] == pytest.approx(s["mean_accepted"], abs=1e-3) and r[4] == s["relaxed"]
        assert r[5] == s["rejected"] and r[6] == pytest.approx(s["tv_cost"], abs=1e-4)
        assert f"done at forward {s['target_forwards']}" in out(final, f"stats_{m}")
    assert rows["csd"][1] < rows["ar"][1] == 16
    first = updates[0]
    assert "● forward" in out(first, "stats_ar")                           # the first frame is mid-race
    assert Image.open(out(final, "map_decision")).size[0] > 2 * draw.PANEL
    # gradio_client fetches every picture of every update: it gets the lean stream, no maps before the final update
    assert not [u for u in updates[:-1] if isinstance(out(u, "map_decision"), str)]


def test_stop_ends_the_run_within_one_iteration_and_a_new_run_works(served):
    client, slow = served
    slow.delay = 0.1
    try:
        job = client.submit(*knob_args(["ar"], seed=9), api_name="/generate")
        for _ in job:                                                    # wait for the first streamed frame
            break
        assert job.cancel()
        at_cancel = slow.forwards
        time.sleep(0.6)
        after = slow.forwards
        assert after - at_cancel <= 1, "the run kept going after Stop"
        time.sleep(0.4)
        assert slow.forwards == after
        assert job.status().code == Status.CANCELLED
    finally:
        slow.delay = 0.0
    job = client.submit(*knob_args(["ar", "sjd"], seed=9), api_name="/generate")
    job.result()
    assert job.status().code == Status.FINISHED
    assert "done at forward 16" in out(job.outputs()[-1], "stats_ar")


@pytest.mark.parametrize("over, message", [
    (dict(methods=[]), "choose at least one method"),
    (dict(prompt="zzz qqq"), "understands none of the words"),
    (dict(cfg=0.0), "less than minimum value"),
    (dict(prompt="a red house " * 50), "prompt is 599 characters; the limit is 500"),
    (dict(model="somebody/secret-model"), "not in the list of choices"),
])
def test_bad_input_is_one_clear_error(served, over, message):
    client, _ = served
    methods = over.pop("methods", ["ar"])
    with pytest.raises(Exception, match=message) as info:
        client.predict(*knob_args(methods, **over), api_name="/generate")
    assert "Traceback" not in str(info.value)


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    backend, slow, factory = tiny_backend()
    cfgs = make_configs(["ar", "csd", "cascade"], prompt="a red house", seed=2, window=4, tree_depth=3, tree_topk=2,
                        tau_pos=0.5, tau_seq=0.5)
    fr = list(race(slow, factory, cfgs))[-1]
    h = Handlers(backend, str(tmp_path_factory.mktemp("exp")))
    return h, RunState("scenes", "a red house", fr.traces, fr.images)


@pytest.mark.slow
def test_preview_inspector_replay_and_export_handlers(state):
    h, st = state
    out = h.preview({"state": st, "lam": 0.9, "delta": 1.0, "tau_pos": 0.6, "tau_seq": 0.6, "opacity": 1.0})
    img, table = out["preview_image"], out["preview_table"]
    assert out["tabs"].selected == "preview"
    assert "Preview: an estimate" in table and img.size[0] > draw.PANEL
    x0, y0 = draw.layout(3)[1]
    c = draw.cell_px((4, 4))
    evt = gr.SelectData(None, {"index": [x0 + 2 * c + 1, y0 + c + 1], "value": None})
    html, cell = h.inspect_map()(st, None, False, evt)                     # (inspector, the focus state's cell)
    assert "csd · row 1, column 2 (position 6)" in html and cell == Cell("csd", 6)
    shown, px = panels.map_layout("groups", st.traces, cards=cards())       # the groups map: group formers only
    assert shown == ["cascade"] and px == panels.GROUP_PX
    (x0, y0), c = draw.layout(1, px)[0], draw.cell_px((4, 4), px)
    evt = gr.SelectData(None, {"index": [x0 + 3 * c + 1, y0 + 2 * c + 1], "value": None})
    html, cell = h.inspect_map("groups")(st, None, False, evt)
    assert "cascade · row 2, column 3 (position 11)" in html and cell == Cell("cascade", 11)
    evt = gr.SelectData(None, {"index": [c * 3 + 1, 1], "value": None})
    html, cell = h.inspect_slot("cascade")(st, evt)
    assert "row 0, column 3" in html and cell == Cell("cascade", 3)
    paths = h.export({"state": st})["files"]
    names = {p.rsplit("/", 1)[-1] for p in paths}
    shared = "a-red-house_seed2_lam0.5_delta0.5_taupos0.5_tauseq0.5"
    assert {"a-red-house_seed2_ar.png", f"{shared}_figure.pdf", f"{shared}_figure.png", f"{shared}_all.zip",
            "a-red-house_seed2_csd_lam0.5_delta0.5_trace.json", f"{shared}_race.gif", f"{shared}_race.mp4"} <= names
    assert all(Image.open(p).size[0] > 100 for p in paths if p.endswith(".png"))
    with pytest.raises(gr.Error, match="generate first"):
        h.export({"state": RunState()})


def test_replay_scrubs_plays_and_pauses_on_the_common_clock(state):
    """The Replay tab (app/replay_tab.py): the clock runs 0..T (the slowest lane's forwards); the picture at k is the
    race film's frame with the drafts (video.draw_frame, the run's patches); the picked method's details follow the
    clock (its step k - 1, clamped); Play starts the timer, each tick moves the clock to the video's next frame (here
    one forward) and the last one stops it at T; Pause stops it; a click on a lane's cell inspects that lane's
    cell."""
    from specviz.app import replay_tab  # the tab's own frame size
    from specviz.render import tree_picture, video
    h, st = state
    r, total = h.replay, max(len(t.steps) for t in st.traces.values())
    started = r.start(st)
    assert started["replay_step"].maximum == total == len(st.traces["ar"].steps) == 16
    assert started["replay_method"].value == "csd" and "Nothing has happened yet" in started["replay_caption"]
    patch = patches(h.catalogue.load("scenes")[0])
    for k in (0, 1, 5, total):
        got = r.scrub({"state": st, "replay_method": "csd", "replay_step": k})
        want = video.draw_frame(st.traces, st.images, k, video.lane_labels(st.traces, cards()),
                                size=replay_tab.frame_size(st), drafts=patch)
        assert np.array_equal(np.asarray(got["replay_image"]), want), k
        assert got["replay_caption"].startswith(f"**Clock: target forward {k} of {total}.**")
    csd = len(st.traces["csd"].steps)
    cap = r.scrub({"state": st, "replay_method": "csd", "replay_step": 2})["replay_caption"]
    assert f"csd · target forward 2 of {csd}:" in cap                       # clock k -> the method's step k - 1
    late = r.pick({"state": st, "replay_method": "csd", "replay_step": total})["replay_caption"]
    assert f"csd is done at forward {csd}; its last forward: csd · target forward {csd} of {csd}:" in late
    t = st.traces["cascade"]
    k = next(i for i in range(len(t.steps)) if tree_picture.tree_layout(t, i)) + 1
    picked = r.pick({"state": st, "replay_method": "cascade", "replay_step": k})
    want = replay_tab.padded(tree_picture.draw_tree(tree_picture.tree_layout(t, k - 1), patch), r.largest(t))
    assert picked["replay_tree"].tobytes() == want.tobytes()                    # the drawn tree of step k - 1
    assert picked["replay_tree_legend"] == tree_picture.legend_html(tree_picture.tree_layout(t, k - 1))   # its legend
    chain = r.pick({"state": st, "replay_method": "csd", "replay_step": 2})
    assert chain["replay_tree"].tobytes() == replay_tab.padded(panels.replay_image(st.traces["csd"], st.images["csd"],
                                                                                1)[0], (0, 0)).tobytes()
    assert chain["replay_tree_legend"] == ""                                    # a chain's legend is in its picture
    on = r.play({"state": st, "replay_method": "csd", "replay_step": 3, "replay_playing": False})
    assert on["replay_timer"].active is True and on["replay_playing"] is True and "replay_step" not in on
    ticked = r.tick({"state": st, "replay_method": "csd", "replay_step": 3})
    assert ticked["replay_step"] == 4 and "replay_timer" not in ticked         # one clock value, still playing
    assert ticked["replay_caption"].startswith(f"**Clock: target forward 4 of {total}.**")   # drawn with the move
    long = RunState(st.model, st.prompt, {"ar": _stretched(st.traces["ar"], 400)}, st.images)
    assert video.clock(long.traces)[:3] == [0, 3, 6]                            # 401 clock values: every 3rd drawn
    assert r.tick({"state": long, "replay_method": "ar", "replay_step": 3})["replay_step"] == 6   # like the video
    assert r.tick({"state": long, "replay_method": "ar", "replay_step": 4})["replay_step"] == 6
    last = r.tick({"state": st, "replay_method": "csd", "replay_step": total - 1})
    assert last["replay_step"] == total and last["replay_timer"].active is False and last["replay_playing"] is False
    assert "replay_step" not in r.tick({"state": st, "replay_method": "csd", "replay_step": total})   # at T: stops
    off = r.play({"state": st, "replay_method": "csd", "replay_step": 7, "replay_playing": True})
    assert off["replay_timer"].active is False and off["replay_playing"] is False and "replay_step" not in off
    again = r.play({"state": st, "replay_method": "csd", "replay_step": total, "replay_playing": False})
    assert again["replay_step"] == 0 and again["replay_timer"].active is True  # Play at the end starts over
    assert "Nothing has happened yet" in again["replay_caption"]               # ... drawn at clock 0
    grid = t.grid
    box = video.frame_boxes(st.traces, replay_tab.frame_size(st), video.lane_labels(st.traces, cards()))[
        list(st.traces).index("csd")]
    c = draw.cell_px(grid, box.px)
    evt = gr.SelectData(None, {"index": [box.x + 3 * c + 2, box.y + 2 * c + 2], "value": None})
    html, cell = r.inspect(st, evt)
    assert "csd · row 2, column 3 (position 11)" in html and cell == Cell("csd", 11)


def _stretched(trace, n: int):
    """The trace with its steps repeated up to n (a race too long for one frame per forward)."""
    import dataclasses
    steps = (list(trace.steps) * (n // len(trace.steps) + 1))[:n]
    return dataclasses.replace(trace, steps=steps)


def test_slider_release_reruns_only_live_models(state):
    h, _ = state
    inputs = knob_inputs(["ar", "csd"])
    frames = list(h.rerun(inputs))
    assert len(frames) >= 2 and set(frames[-1]) == set(GEN_OUTPUTS)
    assert isinstance(frames[-1]["state"], RunState)
    frozen = Handlers(type(h.catalogue)(h.catalogue.load, ("scenes",), reruns=()))
    (only,) = list(frozen.rerun(inputs))
    assert only == {}                                                   # nothing updated


def test_model_allow_list():
    from specviz.app.catalogue import Catalogue, check_model
    from specviz.core.knobs import ConfigError
    closed = Catalogue(lambda n: None, ("scenes",))
    assert check_model(closed, "scenes") == "scenes"
    with pytest.raises(ConfigError, match="--allow-paths"):
        check_model(closed, "/some/checkpoint")
    assert check_model(Catalogue(lambda n: None, ("scenes",), allow_paths=True), " /ckpt ") == "/ckpt"


def test_every_control_starts_inside_its_range():
    backend, _, _ = tiny_backend()
    cfg = app.build_demo(backend).get_config_file()
    sliders = [c["props"] for c in cfg["components"] if c["type"] in ("slider", "number")]
    assert len(sliders) >= 14
    for p in sliders:
        lo, hi = p.get("minimum"), p.get("maximum")
        assert (lo is None or p["value"] >= lo) and (hi is None or p["value"] <= hi), p["label"]


def test_cli_refuses_models_off_the_allow_list():
    with pytest.raises(SystemExit, match="not allow-listed"):
        app.main(["--model", "/some/checkpoint"])


def test_readme_api_example_runs_as_written(served):
    """The README's gradio_client example, against this server (only the URL differs)."""
    import re
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = re.search(r"## The app's API, by name.*?```python\n(.*?)```", readme, re.S).group(1)
    client, _ = served
    code = block.replace('"http://127.0.0.1:7860/"', repr(client.src))
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)                  # noqa: S102 - our own README
    rows = {r[0] for r in scope["result"][GEN_OUTPUTS.index("summary")]["data"]}
    assert rows == {"sjd", "csd"}
    scope["client"].close()


def test_png_writer_is_lossless():
    """widgets._png (the streamed outputs' encoder) decodes back to the very pixels, in every mode it writes."""
    import io

    from specviz.app.widgets import _png
    rng = np.random.default_rng(0)
    for mode, shape in [("RGB", (37, 53, 3)), ("RGBA", (20, 11, 4)), ("L", (9, 13))]:
        a = rng.integers(0, 256, shape, dtype=np.uint8)
        back = Image.open(io.BytesIO(_png(Image.fromarray(a, mode))))
        assert back.mode == mode and np.array_equal(np.asarray(back), a), mode
    pal = Image.new("P", (5, 4), 3)
    back = Image.open(io.BytesIO(_png(pal))).convert("RGB")               # Pillow may renumber the palette
    assert np.array_equal(np.asarray(back), np.asarray(pal.convert("RGB")))


class _ApiRequest:
    headers = {"x-gradio-user": "api"}                   # what gradio_client sends with every call


def _pictures(update: dict) -> list:
    return [(n, v) for n, v in update.items() if n.startswith(("img_", "map_")) and v is not None and v != gr.skip()]


def test_streamed_updates_send_values_not_skips(state):
    """A page's updates carry every output's value (a skipped output makes Gradio rebuild its component, dearer than
    resending an unchanged value); only the state and the replay controls wait for the final update; the maps fill
    in during the run; the first update draws only the map on screen (the rest would show one prefill token)."""
    h, _ = state
    h.catalogue.load("scenes")[0].delay = 0.02
    try:
        ups = list(h.generate(knob_inputs(["ar", "csd"])))
    finally:
        h.catalogue.load("scenes")[0].delay = 0.0
    assert len(ups) >= 3
    skipped = {n for u in ups[:-1] for n in GEN_OUTPUTS if n not in u or u[n] == gr.skip()}
    assert skipped == {"state", "replay_method", "replay_step"}
    shown = views.MAPS["entropy"].output                                       # no map_kind: the first tab
    first = {n for n in views.map_outputs() if isinstance(ups[0][n], Image.Image)}
    assert first == {shown}                           # the first update draws the map on screen only
    assert isinstance(ups[-2]["map_decision"], Image.Image)                         # maps fill in during the run
    assert not [n for n in GEN_OUTPUTS if n not in ups[-1] or ups[-1][n] == gr.skip()]


def test_the_maps_keep_up_with_the_lanes(state):
    """During a run the map on screen is redrawn on its own cadence (here: every update) and every map is redrawn in
    the update where a lane finishes, complete for that lane: its decision panel is then already the final one."""
    h, _ = state
    fast = Handlers(h.catalogue, fps=1000)
    fast.maps_every = {"all": 1e9, "shown": 0.0}
    h.catalogue.load("scenes")[0].delay = 0.005
    try:
        ups = list(fast.generate(knob_inputs(["ar", "csd"]) | {"map_kind": "tv"}))
    finally:
        h.catalogue.load("scenes")[0].delay = 0.0
    done = next(i for i, u in enumerate(ups) if "done at forward" in u["stats_csd"])
    assert 1 < done < len(ups) - 2
    for i in range(1, len(ups) - 1):
        assert ups[i]["map_tv"] is not ups[i - 1]["map_tv"], i                    # the map on screen, every update
        assert (ups[i]["map_entropy"] is not ups[i - 1]["map_entropy"]) == (i == done), i   # the rest: csd finishes
    (x, y), px = draw.layout(2)[1], draw.PANEL
    at_finish, final = (np.asarray(u["map_decision"])[y:y + px, x:x + px] for u in (ups[done], ups[-1]))
    assert np.array_equal(at_finish, final)


def test_api_callers_get_a_lean_stream(state, monkeypatch):
    """gradio_client (x-gradio-user: api) fetches every picture of every update as a file (~70 ms of its CPU each):
    it gets API_FPS updates a second, race pictures at most every API_PICTURES_EVERY_S and never one sent unchanged,
    maps only in the final update (which carries every output, as the call's result)."""
    import specviz.app.handlers as handlers_module
    h, _ = state
    lean = Handlers(h.catalogue, fps=1000, api_fps=1000)
    monkeypatch.setattr(handlers_module, "API_PICTURES_EVERY_S", 0.15)
    h.catalogue.load("scenes")[0].delay = 0.02
    try:
        ups = list(lean.generate(knob_inputs(["ar", "csd"]) | {"request": _ApiRequest()}))
        page = list(lean.generate(knob_inputs(["ar", "csd"])))
    finally:
        h.catalogue.load("scenes")[0].delay = 0.0
    early = [p for u in ups[:-1] for p in _pictures(u)]
    assert not [u for u in ups[:-1] if any(u.get(n) == gr.skip() for n in GEN_OUTPUTS[:GEN_OUTPUTS.index("summary")])]
    assert not [n for n, _ in early if n.startswith("map_")]                       # maps: final update only
    assert not _pictures(ups[0])                                                   # the first update: no file
    assert 0 < len(early) < sum(len(_pictures(u)) for u in page[:-1]) / 2          # a few lane pictures on the way
    assert len({id(v) for _, v in early}) == len(early)
    final = ups[-1]
    assert all(isinstance(final[n], Image.Image) for n in ("img_ar", "img_csd", "map_decision", "hist"))
    assert fingerprint_final(final) == fingerprint_final(page[-1])


def fingerprint_final(final: dict) -> tuple:
    return tuple(np.asarray(final[n]).tobytes() for n in ("img_ar", "img_csd", "map_decision"))
