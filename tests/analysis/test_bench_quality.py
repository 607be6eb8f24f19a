"""CLIP score and FID through libraries: a tiny random CLIP in the released layout
(tests/support/clip_tiny.py)
and a tiny feature extractor for torchmetrics' FID, each against a direct computation on the same images."""
import numpy as np
import pytest
import scipy.linalg
import torch
from PIL import Image

from specviz.analysis import quality
from tests.support.clip_tiny import make_tiny_clip

CAPS = ["a red house", "house", "red", "a house by the sea", "sea", "the red sea house"]


def images(n, seed=0, size=(40, 48), lo=0):
    """Noise around one random colour per image (colours in [lo, 200]), so sets differ in mean and spread."""
    out = []
    for i in range(n):
        g = np.random.default_rng(seed + i)
        colour = g.integers(lo, 200, 3)
        out.append(Image.fromarray(np.clip(colour + g.integers(0, 56, (*size[::-1], 3)), 0, 255).astype(np.uint8)))
    return out


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory):
    return make_tiny_clip(tmp_path_factory.mktemp("clip"), seed=1)


def test_clip_score_is_100_times_the_clipped_cosine_mean_over_images(clip_dir):
    clip = quality.load_clip(str(clip_dir), local_only=True)
    ims = images(6)
    got = quality.clip_scores(ims, CAPS, clip, batch=4)                 # two batches
    model, proc = clip
    with torch.no_grad():                                               # directly: towers, projections, cosine
        b = proc(text=CAPS, images=ims, return_tensors="pt", padding=True)
        img = model.visual_projection(model.vision_model(pixel_values=b["pixel_values"]).pooler_output).numpy()
        txt = model.text_projection(model.text_model(input_ids=b["input_ids"],
                                                     attention_mask=b["attention_mask"]).pooler_output).numpy()
    cos = (img * txt).sum(1) / np.linalg.norm(img, axis=1) / np.linalg.norm(txt, axis=1)
    assert (cos < 0).any() and (cos > 0).any()                          # the clip at 0 matters here
    np.testing.assert_allclose(got, 100 * np.maximum(cos, 0), atol=1e-4)
    long = " ".join(["house"] * 40)                                     # past CLIP's text positions: truncated
    assert len(quality.clip_scores(ims[:1], [long], clip)) == 1


class TinyFeatures(torch.nn.Module):
    """uint8 (B, 3, H, W) -> (B, 4): a fixed random projection of the 2x2-pooled colours."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(12, 4, generator=torch.Generator().manual_seed(0)),
                                    requires_grad=False)

    def forward(self, x):
        pooled = torch.nn.functional.adaptive_avg_pool2d(x.float() / 255, 2)      # (B, 3, 2, 2)
        return pooled.flatten(1) @ self.w


def direct_fid(a: np.ndarray, b: np.ndarray) -> float:
    mu1, mu2 = a.mean(0), b.mean(0)
    s1, s2 = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    root = scipy.linalg.sqrtm(s1 @ s2).real
    return float(((mu1 - mu2) ** 2).sum() + np.trace(s1 + s2 - 2 * root))


def test_fid_equals_the_formula_on_the_same_features(tmp_path):
    fake = images(10, seed=0)
    for i, im in enumerate(images(12, seed=100, lo=80)):
        im.save(tmp_path / f"ref{i:02d}.png")
    (tmp_path / "notes.txt").write_text("not an image")
    ref = quality.reference_images(tmp_path, fake[0].size)
    assert len(ref) == 12 and all(r.size == (40, 48) for r in ref)
    net = TinyFeatures()
    got = quality.fid(fake, ref, feature=net, batch=4)
    feats = lambda ims: net(torch.from_numpy(np.stack([np.asarray(i) for i in ims])).permute(0, 3, 1, 2)).numpy()
    want = direct_fid(feats(fake).astype(np.float64), feats(ref).astype(np.float64))
    assert want > 0.01 and got == pytest.approx(want, rel=1e-3)


def test_reference_images_are_centre_cropped_then_resized(tmp_path):
    wide = np.zeros((20, 60, 3), np.uint8)
    wide[:, 20:40] = 200                                               # the centre square is bright
    Image.fromarray(wide).save(tmp_path / "a.png")
    Image.fromarray(wide).save(tmp_path / "b.png")
    out = quality.reference_images(tmp_path, (10, 10))
    assert out[0].size == (10, 10) and np.asarray(out[0]).min() == 200
    with pytest.raises(FileNotFoundError, match="at least 2"):
        quality.reference_images(tmp_path / "none", (10, 10))
