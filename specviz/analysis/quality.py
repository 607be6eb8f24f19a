"""The bench's quality columns.

- CLIP score as the T2I papers report it (torchmetrics' CLIPScore definition): per image 100 x max(cos(image
  embedding, caption embedding), 0), mean over images; with transformers' CLIPModel / CLIPProcessor from a hub id or
  a local directory (`--clip`; the papers use openai/clip-vit-large-patch14). Captions longer than CLIP's 77 text
  positions are truncated (as torchmetrics does).
- FID through torchmetrics' FrechetInceptionDistance against a folder of reference images (`--fid-ref`): its
  default 2048-d InceptionV3 pool features need the torch-fidelity package (docs/benchmarks.md says how to install it
  without changing torch); `feature=` takes any module mapping uint8 (B, 3, H, W) to (B, d) features.
  Reference images are centre-cropped to a square and resized (bicubic) to the generated images' size.
- The embedded model's own columns (scenes only): scorer fidelity, a Fréchet distance on scorer features, and where
  relaxed tokens land (relaxed_low_mid / low_mid).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from PIL import Image

from specviz.core.detail import image_classes
from specviz.scenes import data, world
from specviz.scenes.scorer import fidelity, frechet_distance, load_scorer

CLIP_PAPERS = "openai/clip-vit-large-patch14"
FID_FEATURE = 2048           # torchmetrics: InceptionV3's 2048-d pool features (the FID every paper reports)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")


def load_clip(model_id: str, local_only: bool = False):
    """(CLIPModel, CLIPProcessor) from a hub id or a local directory (safetensors only)."""
    from transformers import CLIPModel, CLIPProcessor  # heavy: only a --clip run needs them
    try:
        model = CLIPModel.from_pretrained(model_id, local_files_only=local_only, use_safetensors=True).eval()
        return model, CLIPProcessor.from_pretrained(model_id, local_files_only=local_only)
    except (OSError, ValueError) as e:
        raise FileNotFoundError(f"--clip {model_id}: cannot load a CLIP model there ({type(e).__name__}: "
                                f"{str(e).splitlines()[0][:160]})") from e


@torch.no_grad()
def clip_scores(images: list, captions: list[str], clip, batch: int = 32) -> list[float]:
    """100 x max(cos, 0) per (image, caption) pair; `clip` = load_clip(...)."""
    model, proc = clip
    out = []
    for i in range(0, len(images), batch):
        b = proc(text=captions[i:i + batch], images=images[i:i + batch], return_tensors="pt", padding=True,
                 truncation=True, max_length=model.config.text_config.max_position_embeddings)
        o = model(**b)
        img = torch.nn.functional.normalize(o.image_embeds.double(), dim=-1)
        txt = torch.nn.functional.normalize(o.text_embeds.double(), dim=-1)
        out += (100 * (img * txt).sum(-1).clamp_min(0)).tolist()
    return out


def reference_images(folder: Path | str, size: tuple[int, int]) -> list[Image.Image]:
    """Every image in `folder` (sorted by name), RGB, centre-cropped to a square and resized to size (w, h)."""
    folder = Path(folder)
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES) if folder.is_dir() else []
    if len(files) < 2:
        raise FileNotFoundError(f"--fid-ref {folder}: FID needs a folder of at least 2 reference images "
                                f"({', '.join(IMAGE_SUFFIXES)})")
    out = []
    for p in files:
        im = Image.open(p).convert("RGB")
        s = min(im.size)
        left, top = (im.width - s) // 2, (im.height - s) // 2
        out.append(im.crop((left, top, left + s, top + s)).resize(size, Image.BICUBIC))
    return out


def _uint8(images: list) -> torch.Tensor:
    return torch.from_numpy(np.stack([np.asarray(im.convert("RGB")) for im in images])).permute(0, 3, 1, 2)


def fid(images: list, reference: list, feature=None, batch: int = 32) -> float:
    """torchmetrics FID of `images` against `reference` (PIL images of one size); feature: 2048 (InceptionV3 via
    torch-fidelity) or a module."""
    from torchmetrics.image.fid import FrechetInceptionDistance  # optional: only a --fid-ref run needs it
    try:
        metric = FrechetInceptionDistance(feature=FID_FEATURE if feature is None else feature, normalize=False)
    except ModuleNotFoundError as e:
        raise FileNotFoundError(f"--fid-ref: torchmetrics' Inception features need torch-fidelity "
                                f"(docs/benchmarks.md, FID): {e}") from e
    for real, ims in ((True, reference), (False, images)):
        for i in range(0, len(ims), batch):
            metric.update(_uint8(ims[i:i + batch]), real=real)
    return float(metric.compute())


# -- the embedded model's own columns --------------------------------------------------------------------------------
def add_embedded(model, rows: dict, out: dict, images: dict) -> None:
    """Scorer fidelity, a Fréchet distance on scorer features against real scenes of the same captions (4 per
    caption; fields a prompt leaves unspecified are drawn at random), and relaxed_low_mid / low_mid."""
    scorer = load_scorer()
    rng = np.random.default_rng(77)
    real = []
    for x in next(iter(rows.values())):
        for _ in range(4):
            real.append(world.render(data.scene_from_tokens(fill_unspecified(x["caption_tokens"], rng)), rng))
    real_f = scorer.features(np.stack(real))
    for m, r in rows.items():
        imgs = np.stack([np.asarray(i) for i in images[m]])
        caps = torch.tensor([x["caption_tokens"] for x in r])
        out[m]["fidelity"] = round(float(np.mean(fidelity(scorer, imgs, caps))), 4)
        out[m]["fid_scorer"] = round(frechet_distance(scorer.features(imgs), real_f), 3)
        out[m]["relaxed_low_mid"] = relaxed_low_mid(imgs, r, model.grid)
        out[m]["low_mid"] = low_mid(imgs, model.grid)


def fill_unspecified(tokens: list[int], rng: np.random.Generator) -> list[int]:
    """A caption's tokens with every unspecified field (its null id) set to a random value of that field."""
    null = data.null_tokens()                            # field f's values are null - len(FIELDS[f]) .. null - 1
    sizes = [len(data.FIELDS[f]) for f in data.FIELD_NAMES]
    return [t if t != n else int(n - k + rng.integers(k)) for t, n, k in zip(tokens, null, sizes)]


def relaxed_low_mid(images: np.ndarray, runs: list, grid) -> float | None:
    """Share of the relaxed committed tokens whose decoded patch is low- or mid-detail (core/detail.py's class below
    high in the image the run produced); None when nothing was relaxed."""
    hits = total = 0
    for img, x in zip(images, runs):
        pos = x.get("relaxed_positions", [])
        if pos:
            cls = image_classes(img, tuple(grid))
            hits += int((cls[pos] < 2).sum())
            total += len(pos)
    return round(hits / total, 4) if total else None


def low_mid(images: np.ndarray, grid) -> float:
    """Share of all positions whose decoded patch is low- or mid-detail: the base rate relaxed_low_mid compares with."""
    cls = np.concatenate([image_classes(img, tuple(grid)) for img in images])
    return round(float((cls < 2).mean()), 4)
