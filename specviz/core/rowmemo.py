"""Per-row numbers of a law, computed once per forward (the engine's own cost per verification step).

A verification step asks for the same numbers of the same target laws twice: CSD's rule needs H(q) and TV(p, q) for
every slot, and the step's record asks again for the judged slots (a prefix of those rows) and the new token's row
(one of them). `rows(fn)` wraps a pure function whose rows are independent (an (L, V) -> (L,) reduction of one or
more laws of the same rows), so a later call on rows it has already answered — the same tensors, or a block of their
rows — slices the remembered answer instead of another pass over (L, V). The values are the first call's, bit for
bit.

A call is recognised by what its tensors ARE, not by a name: the storage they view, their row offset, row stride,
last dimension, dtype and version counter (an in-place write to any view of a law changes it, so a changed law is
never answered from memory). Each entry holds its tensors, so their storage cannot be freed and reused by another
law while remembered. The memo is per thread (the served app runs sessions in worker threads) and keeps the last `SIZE`
answers for rows of (L > 1, V) laws; a single law's answer is looked up among them but not kept. `fn.offer(*laws,
make=...)` lets a caller that holds cheaper inputs (the logits) say how to make the answer, row by row, if asked.
"""
from __future__ import annotations

import functools
import threading

import torch

SIZE = 8                               # answers remembered per thread (a step asks for about four)
_local = threading.local()


def _shape(t: torch.Tensor):
    """(storage address, dtype, device, version, last dim, element stride, row offset in elements, rows, row
    stride), or None for a tensor this memo does not read as rows of laws (not 1-D or 2-D, or an inference tensor:
    it has no version counter to say whether it changed)."""
    if t.is_inference():
        return None
    if t.dim() == 1:
        rows, row_stride = 1, None
    elif t.dim() == 2:
        rows, row_stride = t.shape[0], t.stride(0)
    else:
        return None
    offset = t.storage_offset()
    return (t.data_ptr() - offset * t.element_size(), t.dtype, t.device, t._version, t.shape[-1], t.stride(-1),
            offset, rows, row_stride)


def _block(entry_shapes, shapes) -> tuple[int, int] | None:
    """(first row, rows) of the call `shapes` inside a remembered call `entry_shapes`, or None when it is not a block of
    the same rows of the same tensors."""
    first = None
    for (ek, eoff, erows, estride), (k, off, rows, stride) in zip(entry_shapes, shapes):
        if ek != k or off < eoff or (rows > 1 and stride != estride):
            return None
        step = estride if estride is not None else 1
        gap = off - eoff
        if gap % step or (estride is None and gap):
            return None
        r0 = gap // step
        if first is None:
            first = (r0, rows)
        if (r0, rows) != first or r0 + rows > erows:
            return None
    return first


def _entries() -> list:
    memo = getattr(_local, "entries", None)
    if memo is None:
        memo = _local.entries = []
    return memo


def _keys(args):
    tensors = [a for a in args if torch.is_tensor(a)]
    shapes = [_shape(t) for t in tensors]
    if not tensors or any(s is None for s in shapes):
        return tensors, None
    return tensors, [(s[:6], s[6], s[7], s[8]) for s in shapes]


def _store(fn, args, tensors, keyed, value) -> None:
    """Remember `value` (a tensor, or a thunk making it at the first ask) as fn's answer for these rows."""
    memo = _entries()
    memo.append([fn, tuple(a for a in args if not torch.is_tensor(a)), keyed, tensors, value])
    del memo[:-SIZE]


def _own(value):
    """The remembered copy of an answer (callers own theirs)."""
    return value.detach().clone()


def rows(fn):
    """Remember fn(*laws) (tensors with the same rows, trailing arguments hashable) per row, as described above."""
    @functools.wraps(fn)
    def call(*args):
        tensors, keyed = _keys(args)
        if keyed is None:
            return fn(*args)
        rest, memo = tuple(a for a in args if not torch.is_tensor(a)), _entries()
        for i, entry in enumerate(memo):
            name, extra, eshapes, _, value = entry
            if name is fn and extra == rest and len(eshapes) == len(keyed):
                block = _block(eshapes, keyed)
                if block is not None:
                    memo.append(memo.pop(i))
                    r0, n = block
                    if isinstance(value, Offered):             # made now, for the rows asked
                        value = value.rows(r0, n)
                        r0 = 0
                    return (value[r0] if tensors[0].dim() == 1 else value[r0:r0 + n]).clone()
        value = fn(*args)
        if tensors[0].dim() == 2 and len(tensors[0]) > 1:      # one law's answer is asked for once: not kept
            _store(fn, args, tensors, keyed, _own(value))
        return value
    call.offer = lambda *args, make: _offer(fn, args, make)
    return call


class Offered:
    """An answer offered for rows it has not made yet: make(lo, hi) -> the answer for rows lo..hi-1, called for the
    rows first asked (a step that judges 3 of 16 slots makes 3 rows), each row made once."""

    def __init__(self, make, n: int):
        self.make, self.value, self.known = make, None, [False] * n

    def rows(self, r0: int, n: int) -> torch.Tensor:
        missing = [r for r in range(r0, r0 + n) if not self.known[r]]
        if missing:
            lo, hi = missing[0], missing[-1] + 1
            made = self.make(lo, hi).detach()
            if self.value is None:
                self.value = torch.empty(len(self.known), dtype=made.dtype, device=made.device)
            keep = [r - lo for r in missing]
            self.value[missing] = made[keep] if len(keep) < hi - lo else made
            for r in missing:
                self.known[r] = True
        return self.value[r0:r0 + n]


def _offer(fn, args, make) -> None:
    """Tell the memo how to make fn(*args) for rows lo..hi-1 of args when first asked (make(lo, hi) -> the answer),
    e.g. from numbers the caller has at hand that fn would recompute; nothing is made unless somebody asks."""
    tensors, keyed = _keys(args)
    if keyed is not None:
        _store(fn, args, tensors, keyed, Offered(make, keyed[0][2]))


def forget() -> None:
    """Drop this thread's remembered answers (a test's clean slate)."""
    _local.entries = []
