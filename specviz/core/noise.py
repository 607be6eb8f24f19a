"""The keyed random numbers of one run (docs/methods.md §9): every draw keyed by (seed, position, purpose), so the
target's sample at a position is the race of its law there (core.sampling). Engine verification (engine/keyed.py)
and the drafters (engine/drafters/) read the same record; it lives below both."""
from __future__ import annotations

from typing import TYPE_CHECKING

from specviz.core.sampling import keyed_uniforms, log_race_scores, race_noise

if TYPE_CHECKING:                                   # annotations only: the laws are torch tensors
    import torch

_KEPT = 256                       # positions whose race noise a run keeps (V floats each; the window moves forward)


class Noise:
    """The keyed random numbers of one run (seed, vocabulary size). Each position's race noise log E_pos (V,) is
    drawn once and kept for the last _KEPT positions asked (a chain asks the same positions step after step)."""

    def __init__(self, seed: int, vocab: int):
        self.seed, self.vocab = seed, vocab
        self._log_e: dict[int, torch.Tensor] = {}

    def log_e(self, pos: int, device=None) -> torch.Tensor:
        """log E_pos (V,): the log of race_noise(seed, pos, vocab), the same bits as race_scores takes it; drawn on
        the host, kept on `device` (the laws' device) after the first ask."""
        got = self._log_e.get(pos)
        if got is None:
            got = self._log_e[pos] = race_noise(self.seed, pos, self.vocab).log().to(device or "cpu")
            if len(self._log_e) > _KEPT:
                del self._log_e[next(iter(self._log_e))]
        return got

    def scores(self, pos: int, laws: torch.Tensor) -> torch.Tensor:
        """sampling.race_scores of laws (k, V) whose rows sit at positions pos, pos + 1, ... (or one law (V,))."""
        if laws.dim() == 1:
            return log_race_scores(laws, self.log_e(pos, laws.device).to(laws.device))
        return log_race_scores(laws, [self.log_e(pos + i, laws.device).to(laws.device) for i in range(len(laws))])

    def races(self, pos: int, laws: torch.Tensor) -> torch.Tensor:
        """x* of each row of laws (k, V) at positions pos, pos + 1, ...: (k,) long, read by the caller at once."""
        return self.scores(pos, laws).argmax(-1)

    def race(self, pos: int, law: torch.Tensor) -> int:
        """x*: the race winner of `law` (V,) at position pos."""
        return int(self.scores(pos, law).argmax(-1))

    def order(self, pos: int, law: torch.Tensor, k: int) -> list[int]:
        """The first k finishers of the race of `law` at pos (a draw without replacement; its support at most)."""
        s = self.scores(pos, law)
        k = min(k, int((law > 0).sum()))
        return s.topk(k).indices.tolist() if k else []

    def u_t(self, pos: int, token: int) -> torch.Tensor:
        """`u` as a 0-d float32 tensor, not read by the host."""
        return keyed_uniforms(self.seed, pos, "accept", 1, token)[0]

    def u(self, pos: int, token: int) -> float:
        """The relaxation's uniform for `token` at pos."""
        return float(keyed_uniforms(self.seed, pos, "accept", 1, token)[0])

    def fresh_t(self, pos: int) -> torch.Tensor:
        """`fresh` as a 0-d long tensor, not read by the host (float64 product: the same truncation as fresh's)."""
        return (keyed_uniforms(self.seed, pos, "fresh", 1)[0].double() * self.vocab).long().clamp_max(self.vocab - 1)

    def fresh(self, pos: int) -> int:
        """A uniform fresh draft token at pos (Jacobi's random init), independent of the race."""
        return min(self.vocab - 1, int(float(keyed_uniforms(self.seed, pos, "fresh", 1)[0]) * self.vocab))


def noise_for(cfg, vocab: int) -> Noise | None:
    """The run's keyed noise, or None in the papers' mode."""
    return Noise(cfg.seed, vocab) if getattr(cfg, "noise", "papers") == "keyed" else None
