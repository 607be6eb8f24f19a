"""Janus-Pro's 24x24 token grid drawn everywhere a grid is drawn: the race frame, every map, the inspector, the
replay, the video lanes and the exports (LlamaGen's 16x16 / 32x32 and Lumina-mGPT's raster:
tests/models/test_llamagen.py,
tests/models/test_lumina.py)."""
import numpy as np
import pytest
import torch

from specviz.analysis import views
from specviz.analysis.cards import cards
from specviz.analysis.views import decided_mask
from specviz.app.configs import make_configs
from specviz.app.race import race
from specviz.render import draw, exports, html, panels, video
from tests.support.toy import toy


@pytest.fixture(scope="module")
def run24():
    torch.set_num_threads(1)
    model, factory = toy(codes=8, grid=24)
    *_, last = race(model, factory, make_configs(["ar", "csd"], prompt="red house", seed=0), fps=1000)
    return last.traces, last.images


def test_the_24x24_grid_draws_in_the_race_maps_inspector_replay_video_and_exports(run24, tmp_path):
    traces, images = run24
    t = traces["csd"]
    assert t.grid == [24, 24] and len(t.tokens) == 576
    frame = panels.race_frame(draw.upscale(images["csd"], t.grid), decided_mask(t, 3), t.grid)
    assert frame.size == (240, 240)                                    # 10 px per cell
    undecided = ~decided_mask(t, 3)
    assert undecided.shape == (24, 24) and undecided.any() and not undecided.all()
    for kind in views.MAPS:
        assert panels.heatmap(kind, traces, images, cards=cards()).size[0] > draw.PANEL
    assert "row 23, column 23 (position 575)" in html.inspector(t, 575, cards())
    img, caption = panels.replay_image(t, images["csd"], 5)
    assert img.size[0] > panels.REPLAY_PX and "of" in caption
    box = video.frame_boxes(traces)[list(traces).index("csd")]
    lane = np.asarray(video.draw_frame(traces, images, video.clock(traces)[-1]))[box.y:box.y + box.px,
                                                                                 box.x:box.x + box.px]
    assert np.array_equal(lane, np.asarray(draw.upscale(images["csd"], t.grid, box.px)))
    paths = exports.export_run(traces, images, "red house", tmp_path, videos=False, cards=cards())
    assert any(p.name.endswith("_csd_lam0.5_delta0.5.png") for p in paths)
