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
- Static KV cache: every backend preallocates its cache for prompt + grid + SCRATCH rows at prefill and
  never reallocates it. A forward of N tokens writes its K/V by index copy at rows [T, T + M); `commit` moves the
  kept rows by index copy and resets the length. Compiled (`compile()`), M = bucket(N) (padding rows see only
  themselves and nobody sees them) and it attends over the whole capacity under an (M, capacity) mask, so every
  forward of one bucket has one shape and one CUDA graph / torch.compile graph captures it. Eager, M = N (`exact`)
  and scenes / LlamaGen attend over the T + N rows in use (the sums of the recorded golden traces; a padded or
  capacity-wide forward sums in another order); Janus / Lumina-mGPT attend over transformers' StaticCache capacity.
- Beyond the boundary a backend may offer capabilities, asked of the model and never of its name: `eagle_head()`
  (its own trained EAGLE head for the tree drafters, engine/drafters/protocols.OffersEagleHead; models/scenes.py).
"""
from __future__ import annotations

import torch

SCRATCH = 256                   # cache rows after prompt + grid: the largest padded forward (tree_nodes <= 128, with
#                                 Lumina's end-of-line rows at most 2 x 128)
BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def bucket(n: int) -> int:
    """The padded row count of a forward of n rows: the smallest of BUCKETS >= n (one compiled shape per bucket)."""
    for b in BUCKETS:
        if n <= b:
            return b
    raise ValueError(f"a forward of {n} rows exceeds the static cache's {SCRATCH} scratch rows")


def exact(n: int) -> int:
    """The eager row count: no padding (a padded forward reorders float sums; the golden traces are recorded eager)."""
    if n > SCRATCH:
        raise ValueError(f"a forward of {n} rows exceeds the static cache's {SCRATCH} scratch rows")
    return n


def padded_inner(inner: torch.Tensor, size: int) -> torch.Tensor:
    """(n, n) bool visibility among the fed rows -> (size, size): padding rows see only themselves, none sees them."""
    n = inner.shape[0]
    out = torch.eye(size, dtype=torch.bool, device=inner.device)
    out[:n, :n] = inner
    return out


def static_mask(prefix: torch.Tensor, inner: torch.Tensor, capacity: int) -> torch.Tensor:
    """Queries over the whole static cache: prefix (..., T) bool (which committed rows are visible), inner
    (..., M, M) among the scratch rows at [T, T + M) -> (..., M, capacity) bool; every other column is hidden."""
    t, m = prefix.shape[-1], inner.shape[-1]
    lead = torch.broadcast_shapes(prefix.shape[:-1], inner.shape[:-2])
    out = torch.zeros((*lead, m, capacity), dtype=torch.bool, device=inner.device)
    out[..., :t] = prefix.unsqueeze(-2)
    out[..., t:t + m] = inner
    return out


def additive(seen: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A bool mask -> the additive float mask of the same shape (0 where seen, the dtype's minimum elsewhere)."""
    add = torch.zeros(seen.shape, dtype=dtype, device=seen.device)
    return add.masked_fill_(~seen, torch.finfo(dtype).min)


def compact_path(caches, t: int, kept: torch.Tensor, device) -> None:
    """After a tree forward whose scratch rows start at cache position t: move the kept rows (a path, in order) to
    t, t + 1, ... in every (keys, values) pair of `caches` (B, heads, positions, dim). A chain (kept = 0..k-1) is
    already in place."""
    k = kept.numel()
    if k and not torch.equal(kept, torch.arange(k)):
        src = (t + kept).to(device)
        dst = torch.arange(t, t + k, device=device)
        for keys, values in caches:                                   # in place: the storage never changes
            keys.index_copy_(2, dst, keys.index_select(2, src))
            values.index_copy_(2, dst, values.index_select(2, src))


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


class CompileUnavailable(ValueError):
    """torch.compile cannot compile on this machine (no working inductor backend): the CLI's one `error:` line."""


def _probe_compile() -> None:
    """Compile and run a two-op function: raises whatever inductor raises where it cannot compile here."""
    fn = torch.compile(lambda x: (x * 2).sum(), mode="reduce-overhead")
    fn(torch.ones(2))


_PROBED: list = []                                   # the probe runs once per process (it costs seconds)


def check_compile() -> None:
    """Raise CompileUnavailable, one line, where torch.compile cannot compile here; silent where it can."""
    if not _PROBED:
        try:
            _probe_compile()
        except Exception as e:                                    # noqa: BLE001 (any backend failure refuses)
            first = str(e).splitlines()[0][:160] if str(e) else ""
            raise CompileUnavailable(f"--compile is unavailable: torch.compile cannot compile on this machine "
                                     f"({type(e).__name__}: {first}); run without --compile") from None
        _PROBED.append(True)


def compiled(fn):
    """torch.compile(fn, mode="reduce-overhead", dynamic=False): one graph per padded bucket (CUDA graphs on CUDA,
    inductor kernels on the CPU), after check_compile."""
    check_compile()
    return torch.compile(fn, mode="reduce-overhead", dynamic=False)


def mark_static(caches) -> None:
    """Tag (keys, values) cache tensors as fixed addresses, so CUDA graphs capture their in-place writes."""
    for pair in caches:
        for x in pair:
            torch._dynamo.mark_static_address(x)


def write_kv(cache: tuple, start, k: torch.Tensor, v: torch.Tensor) -> None:
    """Write a forward's keys and values into a preallocated (B, H, capacity, D) cache pair in place: at row `start`
    onward (an int), or at the rows a tensor of positions names (index_copy_: the padded, compiled path)."""
    kc, vc = cache
    if isinstance(start, torch.Tensor):
        kc.index_copy_(2, start, k)
        vc.index_copy_(2, start, v)
    else:
        n = k.shape[2]
        kc[:, :, start:start + n] = k
        vc[:, :, start:start + n] = v
