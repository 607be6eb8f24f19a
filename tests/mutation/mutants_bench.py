"""Wrong variants of the bench's papers' columns, prompt selection, CLIP score and Lumina-mGPT's guidance."""
import functools
import statistics
import tempfile
from pathlib import Path

import numpy as np
import torch

from specviz.analysis import bench, paper, prompts, quality
from specviz.models import lumina
from tests.analysis import test_bench_paper as P
from tests.analysis import test_bench_prompts as PR
from tests.analysis import test_bench_quality as Q
from tests.models import test_lumina_cfg as L
from tests.support.mutants import Mutant

_POOLED, _AGG, _SELECT, _CLIP, _REF = bench.pooled_hist, bench.aggregate, prompts.select, quality.clip_scores, \
    quality.reference_images
_PREFILL, _ACC = lumina.LuminaModel.prefill, paper.acceptance


@functools.lru_cache(maxsize=1)
def _tmp() -> Path:
    return Path(tempfile.mkdtemp(prefix="mutants_bench_"))


@functools.lru_cache(maxsize=1)
def _clip_dir():
    from tests.support.clip_tiny import make_tiny_clip
    return make_tiny_clip(_tmp() / "clip", seed=1)


@functools.lru_cache(maxsize=1)
def _lumina():
    from specviz.models import load_model
    from tests.support.lumina_tiny import make_tiny_lumina
    return load_model(str(make_tiny_lumina(_tmp() / "lumina", seed=0)), "cpu")


def clip_detector():
    Q.test_clip_score_is_100_times_the_clipped_cosine_mean_over_images(_clip_dir())


def crop_detector():
    d = Path(tempfile.mkdtemp(dir=_tmp()))
    Q.test_reference_images_are_centre_cropped_then_resized(d)


def lumina_detector():
    L.test_cfg_half_mixes_as_the_reference(_lumina())


def _capped(r):                                       # the bins stop at 64 tokens: a 64-token step is dropped
    return _POOLED([{"accepted_hist": x["accepted_hist"][:64]} for x in r])


def _zipped(r, ar):                                   # AR's and the method's images paired by file order
    agg = _AGG(r, None)
    if ar:
        agg["speedup_vs_ar"] = round(statistics.median(a["seconds"] / x["seconds"] for a, x in zip(ar, r)), 4)
    return agg


def _off_by_one(hist):                                # the rate at position i counts steps with >= i tokens
    h = np.asarray(hist, float)
    mean, _ = _ACC(hist)
    return mean, [round(float(h[i:].sum() / h.sum()), 4) for i in range(1, len(h) - 1)] if h.sum() else []



def _limit_then_shuffle(texts, limit=None, shuffle=None):
    return _SELECT(_SELECT(texts, limit), None, shuffle)


def _unclipped(images, captions, clip, batch=32):     # negative cosines kept
    model, proc = clip
    with torch.no_grad():
        b = proc(text=captions, images=images, return_tensors="pt", padding=True, truncation=True,
                 max_length=model.config.text_config.max_position_embeddings)
        o = model(**b)
        return (100 * torch.nn.functional.cosine_similarity(o.image_embeds, o.text_embeds)).tolist()


def _stretched(folder, size):                         # reference images resized without the centre crop
    from PIL import Image
    return [Image.open(p).convert("RGB").resize(size, Image.BICUBIC)
            for p in sorted(Path(folder).iterdir()) if p.suffix.lower() in quality.IMAGE_SUFFIXES] \
        if Path(folder).is_dir() else _REF(folder, size)


def _cond_only_below_one(self, prompt, cfg_scale):    # the earlier port: s <= 1 drops the unconditional row
    pf = _PREFILL(self, prompt, cfg_scale if cfg_scale > 1 else 1.0)
    pf.state.cfg_scale = float(cfg_scale)
    return pf


VARIANTS = [
    Mutant("bench: accepted-length histogram capped at 64 bins", lambda mp: mp.setattr(bench, "pooled_hist", _capped),
           (P.test_a_step_that_commits_64_tokens_is_benched,)),
    Mutant("bench: speedup pairs AR and method images by order, not by (prompt, seed)",
           lambda mp: mp.setattr(bench, "aggregate", _zipped),
           (P.test_speedup_pairs_images_by_prompt_and_seed_not_by_order,)),
    Mutant("paper: vLLM per-position acceptance one position off",
           lambda mp: mp.setattr(paper, "acceptance", _off_by_one), (P.test_acceptance_as_vllm_reports_it,)),
    Mutant("prompts: --limit taken before --shuffle", lambda mp: mp.setattr(prompts, "select", _limit_then_shuffle),
           (PR.test_limit_and_shuffle_are_deterministic,)),
    Mutant("CLIP score without the clip at 0", lambda mp: mp.setattr(quality, "clip_scores", _unclipped),
           (clip_detector,)),
    Mutant("FID reference images stretched, not centre-cropped",
           lambda mp: mp.setattr(quality, "reference_images", _stretched), (crop_detector,)),
    Mutant("lumina: guidance scale <= 1 runs the conditional row only",
           lambda mp: mp.setattr(lumina.LuminaModel, "prefill", _cond_only_below_one), (lumina_detector,)),
]
