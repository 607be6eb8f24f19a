"""The two drafter interfaces, declared once: what the families (engine/families.py) ask of whoever proposes.

A chain drafter (the Jacobi window, jacobi.py) proposes a run of drafts for the next positions and learns from the
verification's target laws; a `TreeBuilder` builds a `DraftTree` under the newest committed token: a tree drafter
(the EAGLE head, tree.py; a draft model, model.py) then observes what was committed, SJD-PAC's proactive drafter
(pac.py) carries on from the forward's laws (`carry_on`) instead. A tree method's
drafter comes from a `DrafterFactory` (drafters.drafter_factory), called once per run. A backend that ships its
own EAGLE head says so by offering it (`OffersEagleHead`); drafter_factory asks the model, never its name.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from specviz.engine.drafters.draft_tree import DraftTree

if TYPE_CHECKING:                                   # annotations only: the drafts and laws are torch tensors
    import torch


class ChainDrafter(Protocol):
    def propose(self, committed: list[int], n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Drafts for positions n, n+1, ...: tokens (k,) long and the laws they were drawn from (k, V)."""
        ...

    def update(self, accepted: int, q: torch.Tensor) -> None:
        """After the verification: `accepted` drafts were kept; q (k+1, V) are this forward's target laws."""
        ...


class TreeBuilder(Protocol):
    def build(self, root_token: int, root_pos: int) -> DraftTree:
        """The draft tree under the newest committed token `root_token` (at image position root_pos)."""
        ...


class TreeDrafter(TreeBuilder, Protocol):
    def observe(self, tokens: list[int], positions: list[int], features: Any) -> None:
        """Newly committed tokens at their positions, with the target features before each of them (N, h)."""
        ...


class ProactiveDrafter(TreeBuilder, Protocol):
    def ride(self, tree: DraftTree, q: torch.Tensor, n: int) -> None:
        """After the forward, before the walk of its last tree (root at n - 1): what the walk's reads carry for it."""
        ...

    def carry_on(self, tree: DraftTree, path: list[int], q: torch.Tensor) -> None:
        """After the walk (path: accepted node ids) over this drafter's last tree, with the forward's laws q (N, V)."""
        ...


@dataclass(frozen=True)
class DrafterFactory:
    """How a tree method gets its drafter, called once per run: factory(model, cfg, rnd) -> TreeDrafter, drawing from
    the run's randomness `rnd` (engine/randomness.py: Papers or Keyed). `label` says which drafter it builds, shown
    under a lane ("" = unnamed). The one definition: drafters.drafter_factory returns one, stub.stub_factory is one,
    and decode() takes one as its `drafter_factory`."""
    make: Callable[[Any, Any, Any], TreeDrafter]
    label: str

    def __call__(self, model: Any, cfg: Any, rnd: Any) -> TreeDrafter:
        return self.make(model, cfg, rnd)


@runtime_checkable
class OffersEagleHead(Protocol):
    def eagle_head(self) -> Any:
        """The backend's trained EAGLE head for its own target (tree.HeadDrafter drafts with it), or None."""
        ...
