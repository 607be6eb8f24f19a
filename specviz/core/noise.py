"""The keyed random numbers of one run (docs/methods.md §9): every draw keyed by (seed, position, purpose), so the
target's sample at a position is the race of its law there (core.sampling). Engine verification (engine/keyed.py)
and the drafters (engine/drafters/) read the same record; it lives below both."""
from __future__ import annotations

from typing import TYPE_CHECKING

from specviz.core.sampling import keyed_uniforms, race, race_noise, race_scores

if TYPE_CHECKING:                                   # annotations only: the laws are torch tensors
    import torch


class Noise:
    """The keyed random numbers of one run (seed, vocabulary size)."""

    def __init__(self, seed: int, vocab: int):
        self.seed, self.vocab = seed, vocab

    def race(self, pos: int, law: torch.Tensor) -> int:
        """x*: the race winner of `law` (V,) at position pos."""
        return int(race(law, race_noise(self.seed, pos, self.vocab)))

    def order(self, pos: int, law: torch.Tensor, k: int) -> list[int]:
        """The first k finishers of the race of `law` at pos (a draw without replacement; its support at most)."""
        s = race_scores(law, race_noise(self.seed, pos, self.vocab))
        k = min(k, int((law > 0).sum()))
        return s.topk(k).indices.tolist() if k else []

    def u(self, pos: int, token: int) -> float:
        """The relaxation's uniform for `token` at pos."""
        return float(keyed_uniforms(self.seed, pos, "accept", 1, token)[0])

    def fresh(self, pos: int) -> int:
        """A uniform fresh draft token at pos (Jacobi's random init), independent of the race."""
        return min(self.vocab - 1, int(float(keyed_uniforms(self.seed, pos, "fresh", 1)[0]) * self.vocab))


def noise_for(cfg, vocab: int) -> Noise | None:
    """The run's keyed noise, or None in the papers' mode."""
    return Noise(cfg.seed, vocab) if getattr(cfg, "noise", "papers") == "keyed" else None
