"""The method registry: a toy method added here — one rule function and one record, nothing else — appears in the
CLI, the app's method list and lanes, the sweep tab and the instant preview, runs end to end, and its trace passes
the checks. Also: every knob's range is what RunConfig enforces."""
import dataclasses
import json
import tempfile

import numpy as np
import pytest
import torch

import app
from specviz import __main__ as cli
from specviz.analysis import history as hist
from specviz.analysis.cards import cards
from specviz.analysis.preview import rescore
from specviz.app import sweep_tab
from specviz.app.handlers import GEN_OUTPUTS, Handlers
from specviz.core.knobs import ConfigError, Knob
from specviz.core.trace import Trace
from specviz.engine import config, families, registry
from specviz.engine.groups import CandidateGroup
from specviz.engine.registry import KnobValues
from specviz.render import draw, exports, html, panels, video
from tests.support.apptools import knob_inputs, tiny_backend
from tests.support.toy import run, toy


def _toy_rule(cfg, model):
    """a(y) = min(1, q(y)/p(y) + λ/10) everywhere: relaxes every draft a little."""
    def accept(q, p):
        ratio = torch.where(p > 0, q / p.clamp_min(1e-30), torch.zeros_like(p))
        return torch.where(p > 0, (ratio + cfg.lam / 10).clamp(max=1.0), torch.ones_like(p))
    return accept


def _toy_rescore(judged, knobs):
    return [min(1.0, ev.p_target / ev.p_draft + knobs.lam / 10) if ev.p_draft > 0 else 1.0 for ev in judged]


@pytest.fixture
def toy_method():
    rec = registry.Method(name="toyrelax", label="TOY", family=families.Jacobi, summary="Jacobi · toy relaxation",
                         lossless=False, rule_knobs=("lam",), rule=_toy_rule, rescore=_toy_rescore)
    registry.register(rec)
    yield rec
    del registry.REGISTRY["toyrelax"]


def test_toy_method_runs_everywhere(toy_method, tmp_path, capsys):
    # engine + trace checks
    model, factory = toy(codes=8, grid=4)
    trace = run(model, factory, method="toyrelax", seed=0, window=4, lam=5.0)
    assert len(trace.tokens) == 16 and trace.summary["relaxed"] > 0
    again = Trace.from_json(json.loads(json.dumps(trace.to_json())))            # checks every field
    assert again.tokens == trace.tokens
    # preview: tunable, and at the recorded knobs it reproduces the recorded b
    pv = rescore(trace, KnobValues.from_config(trace.config))
    assert pv.tunable and pv.expected_compression == pytest.approx(pv.baseline_compression)
    # sweep tab
    assert sweep_tab.params()["toyrelax"] == ("lam",)
    # app: method list, lane, outputs; a /generate run through the handlers
    assert "img_toyrelax" in GEN_OUTPUTS and "stats_toyrelax" in GEN_OUTPUTS
    demo = app.build_demo(tiny_backend()[0])
    choices = next(c for c in demo.config["components"] if c.get("props", {}).get("elem_id") == "methods")
    assert ("TOY", "toyrelax") in [tuple(c) for c in choices["props"]["choices"]]
    backend, _, _ = tiny_backend()
    frames = list(Handlers(backend, str(tmp_path), fps=1000).generate(knob_inputs(["toyrelax"])))
    assert frames[-1]["summary"][0][0] == "toyrelax"
    # CLI: the flag takes the new method; a run on the shipped model writes a checked trace
    path = tmp_path / "t.json"
    assert cli.main(["generate", "--method", "toyrelax", "--prompt", "a red house", "--lam", "2",
                     "--trace", str(path)]) == 0
    assert Trace.load(path).method == "toyrelax"
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["tokens"] > 0


@pytest.mark.parametrize("k", registry.all_knobs(), ids=lambda k: k.name)
def test_knob_ranges_are_enforced(k):
    """Each knob's declared range is exactly what RunConfig accepts (just inside: fine; just outside: refused)."""
    ok = config.RunConfig(**{k.name: k.default})
    assert getattr(ok, k.name) == k.default
    bad = []
    if k.kind is str and k.choices:
        bad.append(k.choices[0] + "-not")
    if k.kind is int:
        bad += [int(k.lo) - 1, int(k.hi) + 1, float(k.default) + 0.5, True]
    if k.kind is float:
        bad += [float("nan"), float("inf"), "1"]
        if k.lo is not None:
            bad.append(k.lo if k.open_lo else k.lo - 1e-6)
            config.RunConfig(**{k.name: k.lo + 1e-6})
        if k.hi is not None:
            bad.append(k.hi + 1e-6)
            config.RunConfig(**{k.name: k.hi})
    for v in bad:
        with pytest.raises(ConfigError, match=k.flag):
            config.RunConfig(**{k.name: v})


def _toy_groups(tree, hidden, cfg):
    """Every other child of the same parent is a member (interchangeable), at cosine 1."""
    def group_fn(node, kids):
        members = [m for m in kids if m != node]
        return CandidateGroup(members=members, inter=members, conv=[], cos={m: 1.0 for m in members},
                              child_cos={m: -1.0 for m in members})
    return group_fn


@pytest.fixture
def toy_grouped():
    rec = registry.Method(name="toygroups", label="TOYG", family=families.TreeFamily,
                         summary="draft tree · toy groups", lossless=False, groups=_toy_groups,
                         explain=lambda config, ev: f"TOY LINE at level {ev.level}",
                         group_reading=lambda config: "toy sets: every sibling")
    registry.register(rec)
    yield rec
    del registry.REGISTRY["toygroups"]


def test_one_record_with_groups_and_an_inspector_line_reaches_app_maps_and_inspector(toy_grouped, monkeypatch):
    """Groups and an inspector line are hooks on the record: nothing outside it names the method."""
    model, factory = toy(codes=8, grid=4)
    trace = run(model, factory, method="toygroups", seed=0, tree_depth=2, tree_topk=3, tree_nodes=6)
    Trace.from_json(json.loads(json.dumps(trace.to_json())))
    grouped = [ev for _, ev in trace.events() if ev.groups is not None and ev.groups.interchangeable]
    assert grouped, "the toy's group builder should put siblings in the events' groups extension"
    # app: a method choice and a lane
    assert "img_toygroups" in GEN_OUTPUTS
    demo = app.build_demo(tiny_backend()[0])
    choices = next(c for c in demo.config["components"] if c.get("props", {}).get("elem_id") == "methods")
    assert ("TOYG", "toygroups") in [tuple(c) for c in choices["props"]["choices"]]
    # maps: the groups map draws its groups; methods without groups get no placeholder panel (the legend names them)
    drawn, notes = [], []
    monkeypatch.setattr(draw, "draw_groups", lambda im, cells, grid, _f=draw.draw_groups: drawn.append(cells)
                        or _f(im, cells, grid))
    monkeypatch.setattr(draw, "message", lambda text, *a, _f=draw.message: notes.append(text) or _f(text, *a))
    panels.heatmap("groups", {"toygroups": trace, "sjd": run(model, factory, method="sjd", window=4)}, {},
                   cards=cards())
    assert len(drawn) == 1 and any(c.members for c in drawn[0])
    layout = panels.map_layout("groups", {"sjd": None, "toygroups": trace}, cards=cards())
    assert not notes and layout == (["toygroups"], panels.GROUP_PX)
    # inspector: the record's line under the numbers, and its reading over the candidates table
    out = html.inspector(trace, grouped[0].pos, cards())
    assert "TOY LINE at level" in out and "toy sets: every sibling" in out


TOY_SLIDER = Knob("toy_gain", float, 0.0, lo=0.0, hi=1.0, label="Toy gain γ", help="the toy rule's own slider",
                  ui="main", step=0.05, symbol="γ")


def _toy_slider_rule(cfg, model):
    """a(y) = min(1, q(y)/p(y) + γ): relaxes by its own knob."""
    def accept(q, p):
        ratio = torch.where(p > 0, q / p.clamp_min(1e-30), torch.zeros_like(p))
        return torch.where(p > 0, (ratio + cfg.toy_gain).clamp(max=1.0), torch.ones_like(p))
    return accept


def a_new_slider_reaches_history_exports_caption_preview_and_sweep_opening() -> None:
    """A method declaring its own ui="main" knob (registered here, removed after): with nothing else changed, the
    knob is a History column (table and CSV), in the shared export file names, in the video's settings line, in the
    preview text, and a sweep point setting it opens in the race."""
    rec = registry.Method(name="toyslider", label="TOYS", family=families.Jacobi, summary="Jacobi · toy slider",
                         lossless=False, rule_knobs=("toy_gain",), declares=(TOY_SLIDER,), rule=_toy_slider_rule)
    model, factory = toy(codes=8, grid=3)
    base = run(model, factory, method="csd", seed=0, window=3, lam=0.5)
    registry.register(rec)
    try:
        ts = {m: dataclasses.replace(base, method=m, config={**base.config, "method": m, "toy_gain": 0.25})
              for m in ("csd", "toyslider")}
        images = {m: np.zeros((3, 3, 3), np.uint8) for m in ts}
        # History: a column "γ" after the four, its cell the run's value; the CSV's column "toy_gain"
        h = hist.History()
        h.add(ts, images, "generate")
        headers = list(hist.Row.HEADERS)
        assert headers[4:9] == ["λ", "δ", "τ_pos", "τ_seq", "γ"]
        assert [r[headers.index("γ")] for r in h.table()] == [0.25, 0.25]
        head, first = h.csv().splitlines()[:2]
        assert head.split(",")[4:9] == ["lam", "delta", "tau_pos", "tau_seq", "toy_gain"]
        assert first.split(",")[8] == "0.25"
        # export names: every shared file carries it
        with tempfile.TemporaryDirectory() as root:
            names = [p.name for p in exports.export_run(ts, images, "red house", root, videos=False, cards=cards())]
        assert names[0] == "red-house_seed0_lam0.5_delta0.5_taupos0.8_tauseq0.8_toygain0.25_all.zip", names[0]
        assert "red-house_seed0_toyslider_toygain0.25.png" in names
        # the video's settings line, as the film and the Replay tab draw it (lane_labels carry the sliders)
        line = video.settings_line(ts, video.lane_labels(ts, cards()).sliders)
        assert line == "seed 0 · λ 0.5 · δ 0.5 · τ_pos 0.8 · τ_seq 0.8 · γ 0.25 · papers' noise", line
        # the preview text names it with its value
        assert "τ_seq = 0.80, γ = 0.25. " in html.preview_table([], KnobValues.from_config(ts["csd"].config), cards())
        # a sweep point setting it opens in the race
        assert list(sweep_tab.OPENED)[4] == "toy_gain"                           # a control a point may set
        opened = sweep_tab.open_point([("toyslider", {"toy_gain": 0.5})], 0, {k: 0.1 for k in sweep_tab.OPENED},
                                      ["ar"])
        assert opened["toy_gain"] == 0.5 and opened["methods"] == ["ar", "toyslider"]
    finally:
        del registry.REGISTRY["toyslider"]
    assert "γ" not in hist.Row.HEADERS and "toy_gain" not in sweep_tab.OPENED       # gone with the record


def test_a_new_slider_reaches_history_exports_caption_preview_and_sweep_opening():
    a_new_slider_reaches_history_exports_caption_preview_and_sweep_opening()
