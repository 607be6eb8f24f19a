"""Replay keeps one picture size for the whole replay (so Present mode sizes its layout once: replay_fit.JS): every
step picture of the picked method — its draft trees, the grid picture of a step without one, clock 0's note — is
padded to the run's largest (Replay.largest: the largest tree by tree_picture.size, and the grid picture's size when a
step has no tree), the drawn picture centred at the top of a white canvas, its pixels unchanged."""
import numpy as np

from specviz.app import replay_tab
from specviz.app.configs import make_configs
from specviz.app.handlers import RunState
from specviz.app.race import race
from specviz.render import panels, tree_picture
from tests.support.apptools import tiny_backend


def one_size_for_the_whole_replay():
    """Detector (tests/mutation/mutants_replay.py)."""
    backend, slow, factory = tiny_backend()
    cfgs = make_configs(["ar", "csd", "cascade"], prompt="a red house", seed=2, window=4, tree_depth=3, tree_topk=2)
    fr = list(race(slow, factory, cfgs))[-1]
    st, r = RunState("scenes", "x", fr.traces, fr.images), replay_tab.Replay(backend)
    for m in ("cascade", "csd"):
        t = st.traces[m]
        trees = [tree_picture.size(lay) for s in range(len(t.steps)) if (lay := tree_picture.tree_layout(t, s))]
        grid = [panels.replay_image(t, None, 0)[0].size] if len(trees) < len(t.steps) else []
        want = (max(w for w, _ in trees + grid), max(h for _, h in trees + grid))
        assert r.largest(t) == want, m
        sizes = {r.details(st, m, k)["replay_tree"].size for k in range(len(t.steps) + 2)}
        assert sizes == {want}, (m, sizes)
        if trees:
            k = max(range(len(t.steps)), key=lambda s: tree_picture.size(tree_picture.tree_layout(t, s))
                    if tree_picture.tree_layout(t, s) else (0, 0))
            drawn = tree_picture.draw_tree(tree_picture.tree_layout(t, k), r.patch(st))
            got = np.asarray(r.details(st, m, k + 1)["replay_tree"])
            x = (want[0] - drawn.width) // 2
            assert np.array_equal(got[:drawn.height, x:x + drawn.width], np.asarray(drawn.convert("RGB"))), m
            assert (got[drawn.height:] == 255).all() and (got[:, :x] == 255).all(), m
    return st


def test_one_size_for_the_whole_replay():
    one_size_for_the_whole_replay()
