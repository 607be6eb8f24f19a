"""A pretend accelerator on the CPU: which tensors would live on the model's device, and which operations would mix
them with host tensors the way CUDA refuses ("Expected all tensors to be on the same device").

This machine has no GPU, and on the CPU `torch.zeros(k)` and `torch.zeros(k, device=q.device)` are the same tensor, so
a rule that builds a host tensor and meets the model's laws with it passes every CPU test and fails on its user's
first GPU run. `OnDevice` is a TorchFunctionMode that follows the model's outputs instead:

- **on the device** (tagged): what the model returns (`mark`), what a factory makes with an explicit `device=` (the
  engine writes `device=q.device`), what `.to(<device or tagged tensor>)` / `.cuda()` return, what a tagged tensor's
  own methods make (`new_*`, `*_like`), and every result of an operation with a tagged input;
- **on the host**: everything else, e.g. `torch.rand(k, generator=gen)`, `torch.tensor(list)`, `torch.arange(n)`,
  and what `.cpu()` returns.

An operation is refused (recorded in `mixes`) where CUDA refuses it: a tagged input beside a host tensor of one or
more dimensions (a 0-d host tensor is a scalar there), or a host `torch.Generator` drawing into / from a tagged
tensor (`multinomial`, `rand*_like`, `normal_`, `bernoulli`, ...). Indexing a tagged tensor with host index tensors
(`t[idx]`, `t[idx] = v`, `index_put_`) is allowed, as on CUDA.
"""
from __future__ import annotations

import contextlib
import traceback
import weakref

import torch
from torch.overrides import TorchFunctionMode

_HOST = {"cpu", "numpy", "tolist", "item"}
_INDEXING = {"__getitem__", "__setitem__", "index_put_", "index_put"}
_TO_DEVICE = {"cuda"}


def _tensors(obj, out: list) -> list:
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors(o, out)
    return out


class OnDevice(TorchFunctionMode):
    """Follow the model's device through decode(); `mixes` lists (operation, where) of every refused mix."""

    def __init__(self):
        super().__init__()
        self.tagged: dict[int, weakref.ref] = {}     # id -> a weak reference (tensors compare elementwise)
        self.mixes: list[tuple[str, str]] = []
        self.devices: dict[int, tuple] = {}   # id -> (torch.device, names the model's device), objects kept
        self.on_device = 0            # operations seen with a device input (a check that saw none saw nothing)
        self.off = 0                  # > 0 inside `paused()`: the backend's own work, not checked

    @contextlib.contextmanager
    def paused(self):
        self.off += 1
        try:
            yield
        finally:
            self.off -= 1

    def mark(self, *tensors) -> None:
        for t in _tensors(list(tensors), []):
            if not self.on(t):
                key = id(t)
                self.tagged[key] = weakref.ref(t, lambda _, i=key: self.tagged.pop(i, None))

    def on(self, t: torch.Tensor) -> bool:
        ref = self.tagged.get(id(t))
        return ref is not None and ref() is t

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        out = func(*args, **kwargs)
        if self.off:
            return out
        if name == "__get__" and getattr(getattr(func, "__self__", None), "__name__", None) == "device":
            self.devices[id(out)] = (out, bool(args) and isinstance(args[0], torch.Tensor) and self.on(args[0]))
            return out
        if name == "__get__":             # an attribute: a tensor one (t.T, t.mT) is where its tensor is
            if isinstance(out, torch.Tensor) and args and isinstance(args[0], torch.Tensor) and self.on(args[0]):
                self.mark(out)
            return out
        if name in ("__len__", "dim", "size", "stride", "data_ptr", "storage_offset", "element_size",
                    "is_inference", "__repr__", "__format__"):
            return out
        ins = _tensors(list(args), []) + _tensors(kwargs, [])
        tagged = [t for t in ins if self.on(t)]
        if name in _HOST:
            return out
        if name == "to":
            return self._moved(args, kwargs, out)
        device_arg = self._device_tag(kwargs.get("device")) or any(self._device_tag(a) for a in args[1:])
        onto = name in _TO_DEVICE
        own = bool(args) and isinstance(args[0], torch.Tensor) and self.on(args[0]) and (
            name.startswith("new_") or name.endswith("_like"))
        self.on_device += bool(tagged)
        if tagged and not onto and self._refused(name, args, kwargs, ins):
            self.mixes.append((name, _where()))
        if tagged or onto or own or device_arg:
            self.mark(out)
        return out


    def _moved(self, args, kwargs, out):
        """`.to(...)`: where a device or tensor argument says (a host one: the host), else where it was."""
        dest = [a for a in list(args[1:]) + [kwargs.get("device")] if isinstance(a, (torch.device, str))]
        like = [a for a in args[1:] if isinstance(a, torch.Tensor)]
        if dest or like:
            on = self._device_tag(dest[0]) if dest else self.on(like[0])
        else:
            on = self.on(args[0])                                 # a dtype only: it stays where it was
        if on:
            self.mark(out)
        elif out is not args[0]:
            self.tagged.pop(id(out), None)
        return out

    def device(self) -> torch.device:
        """A device object that names the model's device (a backend's `device` attribute)."""
        d = torch.device("cpu")
        self.devices[id(d)] = (d, True)
        return d

    def _device_tag(self, d) -> bool:
        """Whether a device argument names the model's device: one read off a tagged tensor (`t.device`) or made by
        `device()`; any other (a string, one read off a host tensor) names the host."""
        known = self.devices.get(id(d))
        return known is not None and known[0] is d and known[1]

    def _refused(self, name: str, args, kwargs, ins: list) -> bool:
        """Whether CUDA would refuse this call, which has a tagged input."""
        if isinstance(kwargs.get("generator"), torch.Generator):
            return True
        if name not in _INDEXING:
            return any(not self.on(t) and t.dim() > 0 for t in ins)
        base, value = args[0], _value(name, args, kwargs)
        indices = [t for t in ins if t is not base and t is not value]
        if not self.on(base):        # a host tensor indexed by device indices, or written with device values
            return base.dim() > 0 and (any(self.on(t) for t in indices) or
                                       (isinstance(value, torch.Tensor) and self.on(value)))
        return isinstance(value, torch.Tensor) and not self.on(value) and value.dim() > 0


def _value(name: str, args, kwargs):
    """The values written by an indexing write (they must be on the device, or a scalar)."""
    if name == "__setitem__":
        return args[2] if len(args) > 2 else None
    return args[2] if len(args) > 2 else kwargs.get("values")


def _where() -> str:
    """The innermost specviz frame of the refused call."""
    frames = [f for f in traceback.extract_stack() if "/specviz/" in f.filename]
    return f"{frames[-1].filename.split('/specviz/')[-1]}:{frames[-1].lineno}" if frames else "?"


def model_tensors(obj, seen: set | None = None, depth: int = 0) -> list:
    """Every tensor a backend holds (its modules' parameters, buffers and tensor attributes, and those of the
    objects it keeps): what lives on its device."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 6:
        return []
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, torch.nn.Module):
        return [*obj.parameters(), *obj.buffers(),
                *(v for m in obj.modules() for v in vars(m).values() if isinstance(v, torch.Tensor))]
    if isinstance(obj, (list, tuple, dict)):
        items = obj.values() if isinstance(obj, dict) else obj
        return [t for o in items for t in model_tensors(o, seen, depth + 1)]
    if hasattr(obj, "__dict__") and type(obj).__module__.startswith(("specviz", "transformers")):
        return [t for o in vars(obj).values() for t in model_tensors(o, seen, depth + 1)]
    return []
