"""Drafters: who proposes tokens (Jacobi window: jacobi.py; EAGLE head: tree.py; a smaller AR model: model.py;
SJD-PAC's proactive tree: pac.py), behind the two interfaces of protocols.py. `drafter_factory` picks a model's tree
drafter: a draft model when given, else the EAGLE head the backend offers (protocols.OffersEagleHead)."""
from __future__ import annotations

from specviz.engine.drafters.model import ModelDrafter
from specviz.engine.drafters.protocols import DrafterFactory, OffersEagleHead
from specviz.engine.drafters.tree import HeadDrafter


def drafter_factory(model, draft_model=None):
    """The tree drafter of a model: a draft model when given, else the trained EAGLE head the backend offers (the
    scenes model ships one). Returns its DrafterFactory (protocols.py), or None when the model has no drafter (tree
    methods then fail clearly)."""
    if draft_model is not None:
        same = (draft_model.codebook_size == model.codebook_size and tuple(draft_model.grid) == tuple(model.grid))
        if not same:
            raise ValueError(
                f"--draft-model {getattr(draft_model, 'name', '?')!r} ({draft_model.codebook_size} codes, "
                f"{draft_model.grid[0]}x{draft_model.grid[1]} grid) does not match --model "
                f"{getattr(model, 'name', '?')!r} ({model.codebook_size} codes, {model.grid[0]}x{model.grid[1]} "
                "grid): a draft model must share the target's image tokenizer (e.g. Janus-Pro-1B for -7B)")
        return DrafterFactory(lambda m, cfg, rnd: ModelDrafter(draft_model, cfg, rnd),
                       f"draft model {getattr(draft_model, 'name', '?')}")
    head = model.eagle_head() if isinstance(model, OffersEagleHead) else None
    if head is None:
        return None
    return DrafterFactory(lambda m, cfg, rnd: HeadDrafter(head, m, cfg, rnd), "EAGLE head (assets/drafter.safetensors)")
