"""The map registry (analysis/views.py MAPS): a toy map added as ONE MapSpec record — nothing else — has its sub-tab
and image in the built app's Maps tab, is streamed and ringed with the others, answers the inspector's click on it,
is written by the export (and into its zip) and stands in the exported slide figure with its title and its
colourbar's caption."""
import contextlib
import zipfile

import gradio as gr
import numpy as np
import pytest
import torch

from specviz.analysis import views
from specviz.analysis.cards import cards
from specviz.app import follow, stream
from specviz.app.configs import make_configs
from specviz.app.handlers import GEN_OUTPUTS, Handlers, RunState
from specviz.app.race import race
from specviz.render import draw, exports, figures, panels
from tests.support.apptools import knob_inputs, tiny_backend
from tests.support.toy import toy

KEY = "toyattempts"
BUILT_IN = tuple(views.MAPS)            # the shipped maps, as imported (the mutants' hard-coded lists)


@contextlib.contextmanager
def toy_map():
    """The toy map registered for the block: events at each cell (trace.to_grid's `attempts`), in the slide."""
    spec = views.register(views.MapSpec(key=KEY, title="Toy attempts", compute=lambda t, run: t.to_grid("attempts"),
                                        unit="events", label="toy: events judged or sampled at the cell",
                                        cmap="cividis", slide=True))
    try:
        yield spec
    finally:
        del views.MAPS[KEY]


@pytest.fixture
def registered():
    with toy_map() as spec:
        yield spec


def _finished(methods=("ar", "csd")):
    torch.set_num_threads(1)
    model, factory = toy(codes=8, grid=4)
    cfgs = make_configs(list(methods), prompt="a red house", seed=2, window=4, tau_pos=0.5, tau_seq=0.5)
    fr = list(race(model, factory, cfgs, fps=1e9))[-1]
    return RunState("scenes", "a red house", fr.traces, fr.images)


def every_list_of_maps_carries_a_new_record() -> None:
    """Registered in one record, the toy map is in the app's outputs, the lean stream's, every map update (the
    ring after a click), the export's list and the slide's columns (the detector of the mutation check)."""
    with toy_map() as spec:
        assert spec.output == f"map_{KEY}" and spec.output in GEN_OUTPUTS
        assert spec.output in stream.only_changed({}, {})
        st = _finished(("ar",))
        upd = follow.outlined({"state": st, "focus": follow.Cell("ar", 5), "opacity": 1.0})
        assert isinstance(upd.get(spec.output), type(panels.heatmap("entropy", st.traces, st.images, cards=cards())))
        assert KEY in panels.exported_kinds(st.traces, cards()) and spec in figures.slide_maps()
    assert spec.output not in GEN_OUTPUTS and KEY not in views.MAPS                   # and gone again


def test_every_list_of_maps_carries_a_new_record():
    every_list_of_maps_carries_a_new_record()


def test_a_map_is_one_record(registered, tmp_path):
    import app  # the app module builds the whole Blocks: the tab and its click are read from the built app
    spec = registered
    with pytest.raises(ValueError, match="already registered"):
        views.register(spec)
    # the Maps tab: a sub-tab titled from the record, holding the map's image; a click on it goes to the inspector
    backend = tiny_backend()[0]
    demo = app.build_demo(backend)
    by_elem = {b.elem_id: b for b in demo.blocks.values() if getattr(b, "elem_id", None)}
    assert by_elem[spec.tab_id].label == "Toy attempts" and isinstance(by_elem[spec.output], gr.Image)
    click = next(f for f in demo.fns.values() if (by_elem[spec.output]._id, "select") in f.targets)
    assert click.outputs[0].elem_id == "inspector" and isinstance(click.outputs[1], gr.State)   # and the cell
    # the stream: a run's final update draws it
    h = Handlers(backend, str(tmp_path), fps=1000)
    last = list(h.generate(knob_inputs(["ar", "csd"])))[-1]
    st = last["state"]
    drawn = panels.heatmap(KEY, st.traces, st.images, cards=cards())
    assert np.array_equal(np.asarray(last[spec.output]), np.asarray(drawn))
    # the inspector: a click on csd's panel of the toy map, cell 6 (row 1, column 2), through the wired function
    shown, px = panels.map_layout(KEY, st.traces, cards=cards())
    (x0, y0), c = draw.layout(len(shown), px)[shown.index("csd")], draw.cell_px((4, 4), px)
    evt = gr.SelectData(None, {"index": [x0 + 2 * c + 1, y0 + c + 1], "value": None})
    assert "csd · row 1, column 2 (position 6)" in click.fn(st, None, False, evt)[0]
    # the export: its own PNG, in the zip too
    paths = exports.export_run(st.traces, st.images, "a red house", tmp_path / "export", videos=False, cards=cards())
    mine = [p for p in paths if p.name.endswith(f"_{spec.output}.png")]
    assert len(mine) == 1
    with zipfile.ZipFile(paths[0]) as z:
        assert mine[0].name in z.namelist()
    # the slide: a column titled from the record, its colourbar captioned with its units
    fig = figures.slide_figure(st.traces, st.images, "a red house")
    cols = 1 + len(figures.slide_maps())
    assert [ax.get_title() for ax in fig.axes[:cols]][-1] == "Toy attempts"
    bars = [cax for ax in fig.axes for cax in ax.child_axes]         # colourbars sit inset under the last row
    assert "Toy attempts [events]" in [cax.get_xlabel() for cax in bars]
