"""The scorer: fidelity arithmetic, Fréchet distance, shapes, and the shipped weights' held-out accuracy."""
import numpy as np
import pytest
import scipy.linalg
import torch

torch.set_num_threads(1)

from specviz.scenes import data, world  # noqa: E402
from specviz.scenes.scorer import DEFAULT_PATH, Scorer, fidelity, frechet_distance, load_scorer  # noqa: E402

OFF = [0, 5, 10, 16, 23]                          # token block starts: sky 4+1, ground 4+1, object 5+1, colour 6+1
NULL = [o + len(v) for o, v in zip(OFF, data.FIELDS.values())]


class Fixed:
    """A stand-in scorer whose predictions are given."""

    def __init__(self, pred):
        self.pred = torch.as_tensor(pred)

    def predict(self, images):
        assert len(images) == len(self.pred)
        return self.pred


def tok(idx):
    return [NULL[j] if i is None else OFF[j] + i for j, i in enumerate(idx)]


def test_token_layout_matches_data():
    assert data.null_tokens() == NULL
    s = data.Scene(1, 2, 3, 4, 0)
    assert s.tokens() == tok([1, 2, 3, 4, 0])


def test_fidelity_counts_only_specified_fields():
    imgs = np.zeros((5, 64, 64, 3), np.uint8)
    pred = [[1, 2, 3, 4, 0]] * 5
    caps = [tok([1, 2, 3, 4, 0]),                  # all five right -> 1
            tok([0, 2, 3, 4, 0]),                  # sky wrong -> 4/5
            tok([0, None, None, None, None]),      # only sky asked, wrong -> 0
            tok([None, 2, 0, None, None]),         # ground right, object wrong -> 1/2
            tok([None] * 5)]                       # nothing asked -> 1
    got = fidelity(Fixed(pred), imgs, np.array(caps))
    np.testing.assert_allclose(got, [1.0, 0.8, 0.0, 0.5, 1.0])
    # a null field is ignored whatever the prediction says
    got2 = fidelity(Fixed([[0, 0, 0, 0, 2]] * 5), imgs, torch.tensor(caps))
    np.testing.assert_allclose(got2, [0.0, 1 / 5, 1.0, 0.5, 1.0])


def test_fidelity_rejects_bad_tokens():
    imgs = np.zeros((1, 64, 64, 3), np.uint8)
    with pytest.raises(ValueError):
        fidelity(Fixed([[0] * 5]), imgs, np.array([[0, 0, 0, 0, 0]]))   # 0 is a sky token, not a ground token


def test_frechet_self_is_zero():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((400, 16)) @ rng.standard_normal((16, 16))
    assert abs(frechet_distance(a, a)) < 1e-6
    few = rng.standard_normal((20, 64))                        # singular covariance: still real, finite, ~0
    assert abs(frechet_distance(few, few)) < 1e-6


def test_frechet_shifted_gaussians_closed_form():
    rng = np.random.default_rng(1)
    d = 8
    a = rng.standard_normal((20000, d))
    shift = np.linspace(-1, 1, d)
    # same covariance, shifted mean: exactly |shift|^2 on the samples
    assert frechet_distance(a, a + shift) == pytest.approx(float(shift @ shift), rel=1e-6)
    # different diagonal covariances: population closed form |dmu|^2 + sum (s_a + s_b - 2 sqrt(s_a s_b))
    sd_b = np.linspace(0.5, 2.0, d)
    b = rng.standard_normal((20000, d)) * sd_b + shift
    closed = float(shift @ shift + np.sum(1 + sd_b ** 2 - 2 * sd_b))
    assert frechet_distance(a, b) == pytest.approx(closed, rel=0.05, abs=0.02)
    # and agrees with the textbook sqrtm formula on the samples' own statistics
    sa, sb = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    ref = np.sum((a.mean(0) - b.mean(0)) ** 2) + np.trace(sa + sb - 2 * scipy.linalg.sqrtm(sa @ sb).real)
    assert frechet_distance(torch.from_numpy(a).float(), torch.from_numpy(b).float()) == pytest.approx(ref, rel=1e-4)


def test_scorer_shapes_random_weights():
    torch.manual_seed(0)
    m = Scorer()
    assert sum(p.numel() for p in m.parameters()) < 1_000_000
    imgs, _ = world.batch(np.random.default_rng(0), 6)
    pred = m.predict(imgs)
    assert pred.shape == (6, 5) and pred.dtype == torch.long
    assert ((pred >= 0) & (pred < torch.tensor([len(v) for v in data.FIELDS.values()]))).all()
    f = m.features(imgs)
    assert f.shape == (6, m.feat_dim) and f.dtype == torch.float32
    assert torch.equal(m.predict(torch.from_numpy(imgs)), pred)            # torch uint8 input works too
    assert m.training                                                      # predict restores the module's mode
    with pytest.raises(TypeError):
        m.predict(imgs.astype(np.float32))


def test_load_scorer_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_scorer(tmp_path / "nope.safetensors")


@pytest.mark.skipif(not DEFAULT_PATH.exists(),
                    reason=f"{DEFAULT_PATH} not shipped; train it with: python -m specviz train scorer")
def test_shipped_scorer_heldout_accuracy():
    s = load_scorer()
    imgs, scenes = world.batch(np.random.default_rng(2024), 300, held_out=True)
    truth = torch.tensor([[getattr(sc, f) for f in data.FIELD_NAMES] for sc in scenes])
    acc = (s.predict(imgs) == truth).float().mean(0)
    for name, a in zip(data.FIELD_NAMES, acc.tolist()):
        assert a >= 0.95, f"{name}: held-out accuracy {a:.3f} < 0.95"
    caps = np.array([sc.tokens() for sc in scenes])
    assert fidelity(s, imgs, caps).mean() >= 0.95
