"""Training of the embedded `scenes` stack: tokenizer -> scorer -> target -> drafter.

Every stage is deterministic given its seed, resumable (a safetensors checkpoint in the work directory every few
hundred steps) and writes its final weights to assets/ plus a JSON record used by the model card. A `Stack` names
the model's world, shapes, asset and work directories (SCENES: the shipped one).

Shapes were chosen from measurements on the 2-core machine (one thread, fp32, which beat bf16 autocast there):
VQ ch=48 at 1.1 s/step; 2048 l2-normalised codes of dim 8 (LlamaGen-style: low-dim, redundant); target d=192,
6 layers, ~1.9 s/step at batch 32.

python -m specviz train STAGE|all [--steps N] [--threads T]   (stages: tokenizer, scorer, target, drafter)
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from tqdm import tqdm

from specviz.core import ckpt
from specviz.core.paths import assets_dir
from specviz.scenes import data, loop, world
from specviz.scenes.drafter import agreement, train_drafter_heads
from specviz.scenes.loop import BF16, caption_batch
from specviz.scenes.scorer import Scorer
from specviz.scenes.target import Target, TargetConfig
from specviz.scenes.vq import VQVAE, to_tensor

ASSETS = assets_dir()
WORK = Path(__file__).resolve().parents[2] / ".cache" / "train"
STEPS = {"tokenizer": 900, "scorer": 1000, "target": 5000, "drafter": 600}     # "all" runs them in this order


@dataclass(frozen=True)
class Stack:
    """One generation of the scenes model: its world's batch function (rng, size, held_out) -> (uint8 images,
    scenes), the VQVAE keyword arguments, the target's shape, where weights and checkpoints go, and whether the
    stages run under bf16 autocast."""
    assets: Path = ASSETS
    work: Path = WORK
    batch: Callable = world.batch
    vq: dict = field(default_factory=lambda: {"codes": 2048, "dim": 8, "ch": 48})
    target: TargetConfig = TargetConfig(codes=2048, grid=world.GRID, dim=192, layers=6, heads=6)
    bf16: bool = False
    size: int = world.SIZE                  # image side in pixels (what the scorer reads)

    def autocast(self):
        return torch.autocast(**BF16) if self.bf16 else contextlib.nullcontext()


SCENES = Stack()


def run_stage(stage: str, steps: int | None = None, stack: Stack = SCENES) -> None:
    """One stage with its default (STEPS) or the given number of steps."""
    globals()[f"train_{stage}"](steps=steps or STEPS[stage], stack=stack)


def _record(stage: str, info: dict, stack: Stack = SCENES):
    loop.record(stack.assets / "training.json", stage, info)


def _loop(name: str, model, opt, steps: int, peak_lr: float, step_fn, every: int = 250, log=None,
          stack: Stack = SCENES):
    return loop.run(stack.work, name, model, opt, steps, peak_lr, step_fn, every, log)


# ---------------------------------------------------------------- tokenizer
def load_vq(path=None) -> VQVAE:
    """A trained VQ-VAE in eval mode; its codebook size, code dim and width come from the file's metadata."""
    path = path or ASSETS / "vq.safetensors"
    meta = ckpt.read_meta(path)
    vq = VQVAE(**{k: meta[k] for k in ("codes", "dim", "ch") if k in meta})
    ckpt.load(path, vq)
    return vq.eval()


@torch.no_grad()
def vq_psnr(vq: VQVAE, n: int = 1000, seed: int = 12345, batch_fn=world.batch) -> dict:
    """PSNR, codes used and code perplexity on n held-out scenes drawn by batch_fn (v1's world by default)."""
    rng = np.random.default_rng(seed)
    imgs, _ = batch_fn(rng, n, held_out=True)
    x = to_tensor(imgs)
    mse, used = [], torch.zeros(vq.codes)
    for i in range(0, n, 100):
        codes, _ = vq.encode(x[i:i + 100])
        rec = vq.decode(codes).clamp(-1, 1)
        mse.append(((rec - x[i:i + 100]) * 127.5).pow(2).mean((1, 2, 3)))
        used += torch.bincount(codes.flatten(), minlength=vq.codes)
    mse = torch.cat(mse)
    p = used / used.sum()
    return {"psnr_db": float((10 * torch.log10(255.0 ** 2 / mse)).mean()),
            "codes_used": int((used > 0).sum()), "perplexity": float(torch.exp(-(p[p > 0] * p[p > 0].log()).sum()))}


def train_tokenizer(steps: int = STEPS["tokenizer"], batch: int = 32, seed: int = 0, stack: Stack = SCENES):
    torch.manual_seed(seed)
    vq = VQVAE(**stack.vq)
    opt = torch.optim.Adam(vq.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)

    def step_fn(step):
        imgs, _ = stack.batch(rng, batch)
        x = to_tensor(imgs)
        with stack.autocast():
            out, codes, commit, codebook = vq(x)
        rec = F.mse_loss(out.float(), x)
        if step % 50 == 0:
            with torch.no_grad():
                _, z = vq.encode(x)
            vq.revive_dead_codes(codes, z.float())
        else:
            vq.usage.mul_(0.99).add_(torch.bincount(codes.flatten(), minlength=vq.codes).float(), alpha=0.01)
        return rec + codebook.float() + 0.25 * commit.float(), {"rec": f"{rec.item():.4f}"}

    secs = _loop("vq", vq, opt, steps, 1e-3, step_fn, stack=stack)
    vq.eval()
    ckpt.save(stack.assets / "vq.safetensors", vq, {"codes": vq.codes, "dim": vq.dim, **stack.vq})
    q = vq_psnr(vq, batch_fn=stack.batch)
    _record("tokenizer", {"steps": steps, "batch": batch, "seconds": round(secs), **q,
                          "params": sum(p.numel() for p in vq.parameters())}, stack)
    print("tokenizer:", q)


# ---------------------------------------------------------------- target
def code_pool(vq: VQVAE, n: int, seed: int, stack: Stack = SCENES) -> tuple[torch.Tensor, torch.Tensor]:
    """n training scenes encoded once: captions (n, 5) and codes (n, G*G); cached in the work directory."""
    path = stack.work / f"pool_{n}_{seed}.safetensors"
    if path.exists():
        t = load_file(str(path))
        return t["caps"], t["codes"]
    rng = np.random.default_rng(seed)
    caps, codes = [], []
    with torch.no_grad():
        for _ in tqdm(range(0, n, 256), desc="encode pool", mininterval=5):
            imgs, sc = stack.batch(rng, 256)
            codes.append(vq.encode(to_tensor(imgs))[0].flatten(1).short())
            caps.append(torch.tensor([s.tokens() for s in sc], dtype=torch.int16))
    caps, codes = torch.cat(caps)[:n], torch.cat(codes)[:n]
    stack.work.mkdir(parents=True, exist_ok=True)
    save_file({"caps": caps, "codes": codes}, str(path))
    return caps, codes


def train_target(steps: int = STEPS["target"], batch: int = 32, seed: int = 0, cfg: TargetConfig | None = None,
                 pool: int = 32768, stack: Stack = SCENES, every: int = 250):
    torch.manual_seed(seed)
    cfg = cfg or stack.target
    vq = load_vq(stack.assets / "vq.safetensors")
    model = Target(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.05)
    pool_caps, pool_codes = code_pool(vq, pool, seed + 1, stack)
    rng = np.random.default_rng(seed + 1)
    vrng = np.random.default_rng(999)
    vimgs, vsc = stack.batch(vrng, 256, held_out=True)
    with torch.no_grad():
        vcodes = vq.encode(to_tensor(vimgs))[0].flatten(1)
    vcap = torch.tensor([s.tokens() for s in vsc])
    history = []

    def step_fn(step):
        idx = torch.from_numpy(rng.integers(0, len(pool_codes), batch))
        codes = pool_codes[idx].long()
        cap = caption_batch(pool_caps[idx].numpy(), rng)
        with stack.autocast():
            logits, _ = model(cap, codes)
        loss = F.cross_entropy(logits.float().flatten(0, 1), codes.flatten())
        return loss, {}

    @torch.no_grad()
    def log(step):
        model.eval()
        with stack.autocast():
            logits, _ = model(vcap, vcodes)
        ce = F.cross_entropy(logits.float().flatten(0, 1), vcodes.flatten()).item()
        model.train()
        history.append((step, round(ce, 4)))
        tqdm.write(f"target step {step}: held-out CE {ce:.4f} nats/token")

    secs = _loop("target", model, opt, steps, 1e-3, step_fn, every=every, log=log, stack=stack)
    ckpt.save(stack.assets / "target.safetensors", model, {"config": cfg.to_dict()})
    _record("target", {"steps": steps, "batch": batch, "seconds": round(secs), "config": cfg.to_dict(),
                       "params": sum(p.numel() for p in model.parameters()), "heldout_ce_history": history}, stack)


def load_target(path=None) -> Target:
    path = path or ASSETS / "target.safetensors"
    meta = ckpt.read_meta(path)
    model = Target(TargetConfig(**meta["config"]))
    ckpt.load(path, model)
    return model.eval()


# ---------------------------------------------------------------- scorer
def _augment(x: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """Light, label-preserving augmentation of (B, 3, H, W) in [-1, 1]: a mild blur on some images (generated
    scenes are a little soft), small per-image brightness/contrast jitter and pixel noise. No flips or crops:
    position is a label and the moon's crescent is not mirror-symmetric."""
    b = len(x)
    blur = F.avg_pool2d(F.pad(x, (1, 1, 1, 1), mode="replicate"), 3, stride=1)
    w = (torch.rand(b, 1, 1, 1, generator=g) < 0.3) * torch.rand(b, 1, 1, 1, generator=g) * 0.7
    x = x * (1 - w) + blur * w
    jitter = lambda: 0.06 * (torch.rand(b, 1, 1, 1, generator=g) - 0.5)
    x = x * (1 + jitter()) + jitter()
    x = x + torch.randn(x.shape, generator=g) * (0.04 * torch.rand(b, 1, 1, 1, generator=g))
    return x.clamp(-1, 1)


def _labels(scenes) -> torch.Tensor:
    return torch.tensor([[getattr(s, f) for f in data.FIELD_NAMES] for s in scenes])


@torch.no_grad()
def scorer_accuracy(model, n: int = 1000, seed: int = 12345, batch_fn=world.batch) -> dict:
    """Per-attribute accuracy of `model` on n held-out real scenes (fixed seed) drawn by batch_fn."""
    imgs, sc = batch_fn(np.random.default_rng(seed), n, held_out=True)
    hit = (model.predict(imgs) == _labels(sc)).float().mean(0)
    return {f: round(float(a), 4) for f, a in zip(data.FIELD_NAMES, hit)}


def train_scorer(steps: int = STEPS["scorer"], batch: int = 32, seed: int = 0, stack: Stack = SCENES):
    torch.manual_seed(seed)
    model = Scorer(size=stack.size)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    rng = np.random.default_rng(seed + 2)
    g = torch.Generator().manual_seed(seed + 2)

    def step_fn(step):
        imgs, sc = stack.batch(rng, batch)
        y = _labels(sc)
        logits = model(_augment(to_tensor(imgs), g))
        losses = [F.cross_entropy(o, y[:, j]) for j, o in enumerate(logits)]
        acc = sum((o.argmax(1) == y[:, j]).float().mean() for j, o in enumerate(logits)) / len(logits)
        return sum(losses), {"acc": f"{acc.item():.3f}"}

    def log(step):
        tqdm.write(f"scorer step {step}: held-out accuracy {scorer_accuracy(model, 500, 777, stack.batch)}")
        model.train()

    secs = _loop("scorer", model, opt, steps, 2e-3, step_fn, every=300, log=log, stack=stack)
    model.eval()
    cfg = {"ch": model.body[0][0].out_channels, "feat": model.feat_dim, "size": stack.size}
    ckpt.save(stack.assets / "scorer.safetensors", model, {"config": cfg, "fields": list(data.FIELD_NAMES)})
    acc = scorer_accuracy(model, batch_fn=stack.batch)
    _record("scorer", {"steps": steps, "batch": batch, "seconds": round(secs), "config": cfg,
                       "params": sum(p.numel() for p in model.parameters()),
                       "heldout_accuracy_1000": acc, "min_accuracy": min(acc.values())}, stack)
    print("scorer held-out accuracy:", acc)
    return acc


# ---------------------------------------------------------------- drafter
def train_drafter(steps: int = STEPS["drafter"], batch: int = 32, seed: int = 0, beta: float = 1.0,
                  tau_seq: float = 0.95, pool: int = 32768, stack: Stack = SCENES):
    """Train two EAGLE heads on the same batches (plain, and with CASCADE's convergence re-weighting); ship the
    re-weighted one and record both heads' top-1 agreement with the target on held-out scenes."""
    target, vq = load_target(stack.assets / "target.safetensors"), load_vq(stack.assets / "vq.safetensors")
    caps, codes = code_pool(vq, pool, seed + 1, stack)
    heads, secs = train_drafter_heads(target, caps, codes, steps, batch, seed, {"drafter_plain": 0.0,
                                      "drafter": beta}, tau_seq, stack.work, stack.bf16)
    rec = {"steps": steps, "batch": batch, "beta": beta, "tau_seq": tau_seq, "seconds": round(secs),
           "params": sum(p.numel() for p in heads["drafter"].parameters())}
    for name, head in heads.items():
        rec[f"{name}_top1_agreement"] = round(agreement(target, head, vq, batch_fn=stack.batch, bf16=stack.bf16), 4)
    ckpt.save(stack.assets / "drafter.safetensors", heads["drafter"], {"beta": beta, "tau_seq": tau_seq})
    _record("drafter", rec, stack)
    print("drafter:", rec)
