"""ZipAR and PJD on every surface the other methods reach (History, Sweep, Atlas, the export and its video), each
through the registry: a test per surface that fails if a surface left them out or drew them as raster methods."""
from __future__ import annotations

import zipfile

import numpy as np
import pytest
import torch
from PIL import Image

from specviz.analysis import atlas, atlas_run, history
from specviz.analysis.cards import cards
from specviz.app import sweep_tab
from specviz.app.configs import make_configs
from specviz.app.race import race
from specviz.render import exports, video
from tests.analysis.test_atlas import Textured, check_against_traces
from tests.support.toy import toy

WAVE = dict(zipar_w=2, pjd_c=1)                  # rows overlap on the 4 x 4 toy (w >= 4 would be AR)


@pytest.fixture(scope="module")
def raced():
    torch.set_num_threads(1)
    model, factory = toy(codes=8, grid=4)
    *_, last = race(model, factory, make_configs(["ar", "zipar", "pjd"], prompt="red house", seed=0, **WAVE),
                    fps=1000)
    return last.traces, last.images


def _rows_in_part(mask: np.ndarray) -> int:
    filled = mask.sum(1)
    return int(((filled > 0) & (filled < mask.shape[1])).sum())


def test_the_export_writes_their_images_traces_maps_and_video(raced, tmp_path):
    traces, images = raced
    paths = exports.export_run(traces, images, "red house", tmp_path, videos=True, cards=cards())
    names = [p.name for p in paths[1:]]
    for m in ("zipar", "pjd"):
        assert sum(n.startswith(f"red-house_seed0_{m}") for n in names) == 2, (m, names)   # image, trace
    assert any(n.endswith("_map_missing.png") for n in names)
    with zipfile.ZipFile(paths[0]) as z:
        assert sorted(z.namelist()) == sorted(names)
    gif = next(p for p in paths if p.suffix == ".gif")
    assert Image.open(gif).n_frames == video.frame_count(traces, "gif")


def test_the_video_paints_the_wavefront(raced):
    """The film's frames draw what each lane committed by that forward: zipar's rows in part at once."""
    traces, _ = raced
    z = traces["zipar"]
    assert max(_rows_in_part(video.committed_after(z, k)) for k in video.clock(traces)) >= 2
    assert "ZipAR" in video.lane_names(traces, video.lane_labels(traces, cards())) and \
           "PJD" in video.lane_names(traces, video.lane_labels(traces, cards()))


def test_history_rows_for_them(raced):
    traces, _ = raced
    for m in ("zipar", "pjd"):
        row = history.row_of(traces[m], 1, "race")
        assert row.method == m and row.forwards == traces[m].summary["target_forwards"] < 16, row


def test_the_sweep_offers_w_and_c():
    assert sweep_tab.params()["zipar"] == ("zipar_w",) and "pjd_c" in sweep_tab.params()["pjd"]


@pytest.mark.slow
def test_the_atlas_takes_them(tmp_path):
    model, factory = toy(codes=8, grid=4)
    model = Textured(model)
    specs = ["ar", "zipar:zipar_w=2", "pjd:pjd_c=1"]
    (tmp_path / "t").mkdir()
    rows, new = atlas_run.collect(atlas_run.jobs(specs, 2, 1), tmp_path / "a.jsonl", lambda: (model, factory),
                                  trace_dir=tmp_path / "t")
    result = atlas.aggregate(rows)
    assert new == 6 and result["methods"] == specs
    check_against_traces(result, tmp_path / "t", model)
