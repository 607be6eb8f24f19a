"""The model boundary (docs/design.md §2): every backend offers this surface to the decoding loop (`Model` and
`Prefilled`, declared where the loop asks for them: engine/target.py), and the helpers backends share.

Conventions
- Image positions are 0..H*W-1 in raster order. `forward` feeds image tokens at given positions; row i of the
  returned logits is the target's next-token law *after* consuming tokens[i], i.e. for the position that follows
  tokens[i] in its own path. `Prefilled.logits` is the law for position 0.
- The committed KV rows are never touched by `forward`: new tokens go to a scratch region after them and become
  part of the cache only through `commit(state, kept)`, which keeps the listed scratch rows (a root-to-node path,
  in order). Rejection therefore can never corrupt later steps. Every `forward` is followed by exactly one
  `commit` (possibly with an empty `kept`) before the next `forward`, so a backend may also append the scratch rows
  to a growing cache in `forward` and compact/crop them in `commit`.
- Logits are float32, CFG already mixed (u + s (c - u)); temperature / top-k / top-p belong to the sampler.
- Hidden states are the final-norm states of the conditional row, one per fed token.
- Beyond the boundary a backend may offer capabilities, asked of the model and never of its name: `eagle_head()`
  (its own trained EAGLE head for the tree drafters, engine/drafters/protocols.OffersEagleHead; models/scenes.py).
"""
from __future__ import annotations

import torch

from specviz.engine.target import Model, Prefilled  # noqa: F401  (re-exported: the boundary, declared by its user)


def compact_path(caches, t: int, kept: torch.Tensor, device) -> None:
    """After a tree forward whose scratch rows start at cache position t: move the kept rows (a path, in order) to
    t, t + 1, ... in every (keys, values) pair of `caches` (B, heads, positions, dim). A chain (kept = 0..k-1) is
    already in place."""
    k = kept.numel()
    if k and not torch.equal(kept, torch.arange(k)):
        src = (t + kept).to(device)
        for keys, values in caches:
            keys[:, :, t:t + k] = keys[:, :, src]
            values[:, :, t:t + k] = values[:, :, src]


def kept_rows(kept, pending: int) -> torch.Tensor:
    """`commit`'s `kept` as a 1-D long CPU tensor, checked against the last forward's `pending` scratch rows."""
    kept = torch.as_tensor(kept, dtype=torch.long).view(-1).cpu()
    if kept.numel() > pending or (kept.numel() and (kept.min() < 0 or kept.max() >= pending)):
        raise IndexError(f"kept rows {kept.tolist()} out of range for a forward of {pending} tokens")
    return kept


def guide(logits: torch.Tensor, rows: int, scale: float) -> torch.Tensor:
    """Classifier-free guidance, the one definition every backend uses: logits (rows, N, V) with row 0 conditional
    and row 1 unconditional -> u + scale * (c - u) (N, V); with one row (no guidance) row 0 as it is."""
    return logits[1] + scale * (logits[0] - logits[1]) if rows == 2 else logits[0]


def no_pending(pending: int) -> None:
    """The pending-commit guard every backend's `forward` starts with: the last forward's scratch rows (`pending`)
    must have been committed (or dropped by an empty commit) first."""
    if pending:
        raise RuntimeError("commit() must follow every forward() before the next forward()")


def pick_device(device: str | torch.device, dtype) -> tuple[torch.device, torch.dtype]:
    """device 'auto' -> CUDA if available else CPU; dtype None -> bf16 on CUDA, float32 on CPU."""
    if str(device) == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {str(device)!r} was asked for, but this torch build sees no CUDA device "
                         f"(torch {torch.__version__}); use --device cpu or auto, or install a CUDA build of torch")
    if isinstance(dtype, str):
        dtype = getattr(torch, dtype)
    return dev, dtype or (torch.bfloat16 if dev.type == "cuda" else torch.float32)
