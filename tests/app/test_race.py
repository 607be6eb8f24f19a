"""The race: every lane on one common clock, throttled frames, closing, clear failures; the partial frames."""
import numpy as np
import pytest

from specviz.app.configs import make_configs
from specviz.app.race import race
from specviz.core.knobs import ConfigError
from specviz.engine.decode import decode
from specviz.render import draw
from tests.support.apptools import RACE_KW as KW
from tests.support.apptools import Slow


def test_race_matches_solo_runs_and_shares_one_clock(race_toy):
    model, factory = race_toy
    cfgs = make_configs(["cascade", "ar", "csd"], **KW)
    assert [c.method for c in cfgs] == ["ar", "csd", "cascade"]               # canonical order
    frames = list(race(model, factory, cfgs, fps=1e9))
    assert [f.tick for f in frames] == list(range(1, len(frames) + 1))        # one frame per tick unthrottled
    last = frames[-1]
    assert last.done and last.tick == 16                                      # AR needs 16 forwards on 4x4
    for cfg in cfgs:
        *_, solo = decode(model, cfg, factory)
        t = last.traces[cfg.method]
        assert t.tokens == solo.trace.tokens
        assert t.summary["target_forwards"] == solo.trace.summary["target_forwards"]
    for f in frames:                                                          # forwards never exceed the clock
        for v in f.lanes:
            assert v.forwards <= f.tick and (v.done or v.forwards == f.tick)
    assert last.images["ar"].shape[2] == 3


def test_race_throttles_but_keeps_first_and_final_frames(race_toy):
    model, factory = race_toy
    frames = list(race(model, factory, make_configs(["ar", "sjd"], **KW), fps=1e-3))
    assert len(frames) == 2 and frames[0].tick == 1 and frames[-1].done


def test_closing_the_race_stops_every_lane(race_toy):
    model, factory = race_toy
    slow = Slow(model)
    it = race(slow, factory, make_configs(["ar", "csd"], **KW), fps=1e9)
    next(it), next(it)
    seen = slow.forwards
    it.close()
    assert seen == 2 and slow.forwards == 2           # tick 1 = prefills, tick 2 = one forward each, then none
    with pytest.raises(StopIteration):
        next(it)


def test_tree_method_without_drafter_fails_clearly(race_toy):
    model, _ = race_toy
    with pytest.raises(ConfigError, match="tree drafter"):
        next(race(model, None, make_configs(["ar", "cascade"], **KW)))
    with pytest.raises(ConfigError, match="at least one method"):
        make_configs([], **KW)


def test_partial_frame_hatches_undecided_cells(race_toy):
    model, factory = race_toy
    first = next(race(model, factory, make_configs(["ar"], **KW)))
    img = np.asarray(first.lanes[0].image)
    c = draw.cell_px((4, 4))
    cell = img[c:2 * c, c:2 * c].reshape(-1, 3)                               # an undecided cell
    colours = {tuple(p) for p in cell}
    assert colours == {draw.UNDECIDED_RGB, draw.HATCH_RGB}
    decided = {tuple(p) for p in img[:c, :c].reshape(-1, 3)}                  # position 0 is committed
    assert len(decided) == 1 and decided != {draw.UNDECIDED_RGB}


def _undecided(img, grid) -> np.ndarray:
    """(H, W) bool: the lane picture's cells drawn hatched (undecided)."""
    c = draw.cell_px(grid)
    return np.array([[{tuple(p) for p in img[i * c:(i + 1) * c, j * c:(j + 1) * c].reshape(-1, 3)}
                      == {draw.UNDECIDED_RGB, draw.HATCH_RGB} for j in range(grid[1])] for i in range(grid[0])])


@pytest.mark.parametrize("method,knobs", [("zipar", dict(zipar_w=2)), ("pjd", dict(pjd_c=1))])
def test_a_wavefront_lane_paints_every_committed_row(race_toy, method, knobs):
    """Every frame of a zipar / pjd lane draws exactly the positions its trace committed so far (the wavefront,
    several rows at once; the lane painted only the raster prefix before), and counts them."""
    from specviz.analysis.views import decided_mask  # noqa: PLC0415 - the map the frames are checked against
    model, factory = race_toy
    rows_at_once = 0
    for frame in race(model, factory, make_configs([method], **KW, **knobs), fps=1e9):
        lane, mask = frame.lanes[0], decided_mask(frame.traces[method])
        assert np.array_equal(_undecided(np.asarray(lane.image), (4, 4)), ~mask), frame.tick
        assert lane.committed == mask.sum(), frame.tick
        rows_at_once = max(rows_at_once, int(((mask.sum(1) > 0) & (mask.sum(1) < 4)).sum()))
    assert rows_at_once >= 2
