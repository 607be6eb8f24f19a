"""Safetensors-only checkpoints: weights, optimizer state and JSON metadata in one file (no pickles)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file


def save(path: str | Path, model: torch.nn.Module, meta: dict, optimizer: torch.optim.Optimizer | None = None):
    """Write atomically: model tensors under 'model.', optimizer tensors under 'opt.', meta as JSON metadata."""
    tensors = {f"model.{k}": v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    meta = dict(meta)
    if optimizer is not None:
        sd = optimizer.state_dict()
        for pid, st in sd["state"].items():
            for k, v in st.items():
                t = v if torch.is_tensor(v) else torch.tensor(v)
                tensors[f"opt.{pid}.{k}"] = t.detach().contiguous().cpu()
        meta["opt_groups"] = sd["param_groups"]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    save_file(tensors, str(tmp), metadata={"meta": json.dumps(meta)})
    os.replace(tmp, path)


def load(path: str | Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer | None = None) -> dict:
    """Load weights (and optimizer state if given) into the objects; return the JSON metadata."""
    with safe_open(str(path), framework="pt") as f:
        meta = json.loads(f.metadata()["meta"])
        model.load_state_dict({k[6:]: f.get_tensor(k) for k in f.keys() if k.startswith("model.")})
        if optimizer is not None and "opt_groups" in meta:
            state: dict = {}
            for k in f.keys():
                if k.startswith("opt."):
                    _, pid, name = k.split(".", 2)
                    state.setdefault(int(pid), {})[name] = f.get_tensor(k)
            optimizer.load_state_dict({"state": state, "param_groups": meta["opt_groups"]})
    return meta


def read_meta(path: str | Path) -> dict:
    with safe_open(str(path), framework="pt") as f:
        return json.loads(f.metadata()["meta"])
