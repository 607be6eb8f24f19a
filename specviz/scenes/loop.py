"""Shared training helpers for every scenes stage (v1 and v2): warm-up + cosine learning rate, a resumable loop
with safetensors checkpoints and a progress bar, classifier-free-guidance caption dropout, and the JSON training
record read by the model card. Imports nothing from the stages, so stages and drafter training import it freely.
"""
from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from tqdm import tqdm

from specviz.core import ckpt
from specviz.scenes import data

BF16 = dict(device_type="cpu", dtype=torch.bfloat16)


def cosine_lr(step: int, total: int, peak: float, warmup: int = 200, floor: float = 0.1) -> float:
    """Linear warm-up over `warmup` steps, then cosine decay from `peak` to `floor * peak` at `total`."""
    if step < warmup:
        return peak * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


def resume(path: Path, model, opt) -> tuple[int, float]:
    """(steps done, seconds spent) from a checkpoint at `path`, loading model and optimizer state; (0, 0) if none."""
    if path.exists():
        meta = ckpt.load(path, model, opt)
        return meta["step"], meta["seconds"]
    return 0, 0.0


def run(work: Path, name: str, model, opt, steps: int, peak_lr: float,
        step_fn: Callable[[int], tuple[torch.Tensor, dict]], every: int = 250,
        log: Callable[[int], None] | None = None) -> float:
    """Resumable training loop: step_fn(step) -> (loss, progress-bar postfix). Saves `work/name.safetensors`
    (weights, optimizer, step, seconds) every `every` steps and at the end, then calls log(step).
    Returns the total training seconds across resumptions."""
    path = Path(work) / f"{name}.safetensors"
    start, seconds = resume(path, model, opt)
    bar = tqdm(range(start, steps), initial=start, total=steps, desc=name, mininterval=5)
    t0 = time.time()
    for step in bar:
        for g in opt.param_groups:
            g["lr"] = cosine_lr(step, steps, peak_lr)
        loss, post = step_fn(step)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        bar.set_postfix(loss=f"{loss.item():.4f}", **post, refresh=False)
        if (step + 1) % every == 0 or step + 1 == steps:
            ckpt.save(path, model, {"step": step + 1, "seconds": seconds + time.time() - t0}, opt)
            if log:
                log(step + 1)
    return seconds + time.time() - t0


def record(path: Path, stage: str, info: dict) -> None:
    """Merge one stage's numbers into the JSON training record at `path` (read by the model card)."""
    path = Path(path)
    rec = json.loads(path.read_text()) if path.exists() else {}
    rec[stage] = info
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec, indent=2))


def caption_batch(caps: np.ndarray, rng: np.random.Generator, p_all: float = 0.1, p_field: float = 0.1) -> torch.Tensor:
    """Caption tokens (B, 5) with classifier-free-guidance dropout: whole caption, and each field on its own."""
    null = np.array(data.null_tokens())
    drop = (rng.random(caps.shape) < p_field) | (rng.random((len(caps), 1)) < p_all)
    return torch.from_numpy(np.where(drop, null[None], caps))
