"""The keyed random numbers of one run (docs/methods.md §9): every draw keyed by (seed, position, purpose), so the
target's sample at a position is the race of its law there (core.sampling). Engine verification (engine/keyed.py)
and the drafters (engine/drafters/, through engine/randomness.py) read the same record; it lives below both.

Two readings of the keys, recorded in a keyed trace's config as `noise_version` (a keyed trace without it was read
with version 1):
  1  a CPU generator seeded per (seed, position, purpose[, token]) (sampling.keyed_uniforms): one seeding per row;
  2  a counter-based hash: U(seed, pos, purpose, code) = mix(c_code XOR k(seed, pos, purpose)) with k a 32-bit fold
     of sampling.noise_key and c_code = mix(code * golden + 1), mix a 32-bit integer finaliser (two multiplies,
     three xor-shifts); a whole (N, V) block is one chain of int32 tensor ops where the laws live, and a single
     value (`uniform`) is the same arithmetic on Python ints, to the same bits.
"""
from __future__ import annotations

import torch

from specviz.core import rowmemo
from specviz.core.sampling import keyed_uniforms, log_race_scores, noise_key, race_noise

VERSION = 2                       # the reading new keyed runs use and record
_WINDOW = 64                      # positions of race rows a run keeps at least (V floats each; the window moves on)
_M32 = 0xFFFFFFFF
_A, _B, _GOLD = 0x7FEB352D, 0x846CA68B, 0x9E3779B9      # the finaliser's multipliers; the Weyl step of the codes


def _signed(x: int) -> int:
    """A 32-bit pattern as the int32 value torch stores (torch's int32 products wrap modulo 2^32)."""
    x &= _M32
    return x - (1 << 32) if x >= 1 << 31 else x


def mix(x: int) -> int:
    """The 32-bit finaliser on a Python int (0 <= x < 2^32)."""
    x ^= x >> 16
    x = (x * _A) & _M32
    x ^= x >> 15
    x = (x * _B) & _M32
    return x ^ (x >> 16)


def mix_t(x: torch.Tensor) -> torch.Tensor:
    """`mix` on an int32 tensor, to the same bits: products wrap, right shifts are made logical by a mask."""
    x = x ^ ((x >> 16) & 0xFFFF)
    x = x * _signed(_A)
    x = x ^ ((x >> 15) & 0x1FFFF)
    x = x * _signed(_B)
    return x ^ ((x >> 16) & 0xFFFF)


def row_key(seed: int, pos: int, purpose: str) -> int:
    """k(seed, pos, purpose): the 63-bit splitmix key of sampling.noise_key folded to 32 bits."""
    z = noise_key(seed, pos, purpose)
    return (z ^ (z >> 32)) & _M32


def code_hash(code: int) -> int:
    """c_code = mix(code * golden + 1): a fixed scrambling of the codes."""
    return mix((code * _GOLD + 1) & _M32)


def code_hash_t(codes: torch.Tensor) -> torch.Tensor:
    """c_code for an int tensor of codes, as int32."""
    return mix_t(codes.to(torch.int32) * _signed(_GOLD) + 1)


def to_unit(z: int) -> float:
    """The top 24 bits of a 32-bit hash as a float in [0, 1) (exact in float32, as torch.rand's)."""
    return (z >> 8) * 2.0 ** -24


def uniform(seed: int, pos: int, purpose: str, code: int) -> float:
    """U(seed, pos, purpose, code) of reading 2, on the host."""
    return to_unit(mix(code_hash(code) ^ row_key(seed, pos, purpose)))


_CODES: dict = {}                 # (vocab, device) -> c_code for every code, int32 (V,)


def uniform_block(seed: int, positions: list[int], purpose: str, vocab: int, device=None) -> torch.Tensor:
    """(N, V) float32: U(seed, positions[i], purpose, v) for every code v, in one chain of tensor ops on `device`."""
    key = (vocab, str(device or "cpu"))
    codes = _CODES.get(key)
    if codes is None:
        codes = _CODES[key] = code_hash_t(torch.arange(vocab, device=device))
    keys = torch.tensor([_signed(row_key(seed, p, purpose)) for p in positions], dtype=torch.int32, device=device)
    return _unit_t(mix_t(codes[None] ^ keys[:, None]))


def uniform_at(seed: int, positions: list[int], purpose: str, codes: torch.Tensor) -> torch.Tensor:
    """(N,) float32: U(seed, positions[i], purpose, codes[i]) where codes (N,) live (not read by the host)."""
    keys = torch.tensor([_signed(row_key(seed, p, purpose)) for p in positions], dtype=torch.int32,
                        device=codes.device)
    return _unit_t(mix_t(code_hash_t(codes) ^ keys))


def _unit_t(z: torch.Tensor) -> torch.Tensor:
    return ((z >> 8) & 0xFFFFFF).float() * 2.0 ** -24


@rowmemo.rows
def _winners(laws: torch.Tensor, rows: torch.Tensor, score) -> torch.Tensor:
    """The race winners of each row of laws against its race rows, scored by a reading's `_score`."""
    return score(laws, rows).argmax(-1)


class Noise:
    """The keyed random numbers of one run (seed, vocabulary size), reading 2 (the counter hash). The race at a
    position is argmax_v q(v) W(v) with W = 1/E (so argmin E/q, the same race as sampling.race, scored by a product:
    reading 2's bits). The rows of W are computed once per position, a window of them in one block, and kept in one
    buffer where the laws live: an ask inside the window is a view (a chain asks the same positions step after
    step); an ask past it moves the window (the overlap copied, the rest computed in one block)."""
    version = VERSION

    def __init__(self, seed: int, vocab: int):
        self.seed, self.vocab = seed, vocab
        self._buf: torch.Tensor | None = None       # (cap, V) race rows of positions _b0 .. _b0 + cap - 1
        self._b0 = 0

    # ------------------------------------------------------------------ what each reading defines
    def _draw_rows(self, positions: list[int], device) -> torch.Tensor:
        """(N, V) race rows for positions: W = 1/E, E = -log(1 - u) (E = 0 once in 2^24 draws: W = 1e30, finite)."""
        e = -torch.log1p(-uniform_block(self.seed, positions, "race", self.vocab, device))
        return 1.0 / e.clamp_min(1e-30)

    @staticmethod
    def _score(laws: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """Race scores of laws against their rows: larger wins; 0 off the support (a law's support is never empty)."""
        return laws * rows

    def uniform(self, pos: int, purpose: str, code: int = 0) -> float:
        """One keyed uniform, on the host."""
        return uniform(self.seed, pos, purpose, code)

    def uniforms_at(self, pos: int, purpose: str, codes: torch.Tensor) -> torch.Tensor:
        """(k,) float32 uniforms at positions pos, pos + 1, ... for codes (k,), where codes live."""
        return uniform_at(self.seed, list(range(pos, pos + len(codes))), purpose, codes)

    # ------------------------------------------------------------------ shared by the readings
    def rows(self, pos: int, k: int, device=None) -> torch.Tensor:
        """(k, V) race rows at positions pos .. pos + k - 1 on `device` (a view into the kept window)."""
        dev = device if isinstance(device, torch.device) else torch.device(device or "cpu")    # the object asked
        buf = self._buf
        if buf is None or buf.device != dev or pos < self._b0 or pos + k > self._b0 + len(buf):
            self._move(pos, k, dev)
        i = pos - self._b0
        return self._buf[i:i + k]

    def _move(self, pos: int, k: int, dev: torch.device) -> None:
        """A new window from pos of max(2k, _WINDOW) positions: rows the old window holds are copied, the rest drawn
        in one block."""
        cap, old, b0 = max(2 * k, _WINDOW), self._buf, self._b0
        keep = range(max(pos, b0), min(pos + cap, b0 + len(old))) if old is not None and old.device == dev else []
        missing = [p for p in range(pos, pos + cap) if p not in keep]
        buf = torch.empty(cap, self.vocab, device=dev)
        if len(keep):
            buf[keep.start - pos:keep.stop - pos] = old[keep.start - b0:keep.stop - b0]
        drawn = self._draw_rows(missing, dev)
        at = torch.tensor([p - pos for p in missing], device=dev)
        buf[at] = drawn
        self._buf, self._b0 = buf, pos

    def scores(self, pos: int, laws: torch.Tensor) -> torch.Tensor:
        """Race scores of laws (k, V) whose rows sit at positions pos, pos + 1, ... (or one law (V,)): the argmax of
        a row is its race's winner, its descending order a draw without replacement (Gumbel top-k)."""
        if laws.dim() == 1:
            return self._score(laws, self.rows(pos, 1, laws.device)[0])
        return self._score(laws, self.rows(pos, len(laws), laws.device))

    def races(self, pos: int, laws: torch.Tensor) -> torch.Tensor:
        """x* of each row of laws (k, V) at positions pos, pos + 1, ...: (k,) long, read by the caller at once. A step
        races its window's rows twice (the verification's x*, the refined drafts' races): once per row
        (core/rowmemo.py, keyed on the laws and the race rows)."""
        if laws.dim() == 2:
            return _winners(laws, self.rows(pos, len(laws), laws.device), type(self)._score)
        return self.scores(pos, laws).argmax(-1)

    def race(self, pos: int, law: torch.Tensor) -> int:
        """x*: the race winner of `law` (V,) at position pos."""
        return int(self.scores(pos, law).argmax(-1))

    def order(self, pos: int, law: torch.Tensor, k: int) -> list[int]:
        """The first k finishers of the race of `law` at pos (a draw without replacement; its support at most)."""
        s = self.scores(pos, law)
        k = min(k, int((law > 0).sum()))
        return s.topk(k).indices.tolist() if k else []

    def orders(self, pos: int, laws: torch.Tensor, widths: list[int]) -> list[list[int]]:
        """`order` of each row of laws (k, V) at positions pos, pos + 1, ... with widths[i] finishers: one read."""
        return orders_of(self.orders_t(pos, laws, widths).tolist(), widths)

    def orders_t(self, pos: int, laws: torch.Tensor, widths: list[int]) -> torch.Tensor:
        """`orders` left where the laws live, not read: (k, 1 + max(widths)) long, each row its law's support size
        then its first finishers (orders_of reads them back)."""
        s, w = self.scores(pos, laws), max(widths)
        return torch.cat([(laws > 0).sum(-1, keepdim=True), s.topk(min(w, laws.shape[-1]), -1).indices], 1)

    def u_t(self, pos: int, token: int) -> torch.Tensor:
        """`u` as a 0-d float32 tensor, not read by the host."""
        return torch.tensor(self.uniform(pos, "accept", token), dtype=torch.float32)

    def u(self, pos: int, token: int) -> float:
        """The relaxation's uniform for `token` at pos."""
        return self.uniform(pos, "accept", token)

    def accept_us(self, pos: int, x: torch.Tensor) -> torch.Tensor:
        """(k,) the relaxation's uniforms of drafts x (k,) at positions pos, pos + 1, ..., where x lives."""
        return self.uniforms_at(pos, "accept", x)

    def fresh_t(self, pos: int) -> torch.Tensor:
        """`fresh` as a 0-d long tensor."""
        return torch.tensor(self.fresh(pos))

    def fresh(self, pos: int) -> int:
        """A uniform fresh draft token at pos (Jacobi's random init), independent of the race (float64 product)."""
        return min(self.vocab - 1, int(self.uniform(pos, "fresh") * self.vocab))


class NoiseV1(Noise):
    """Reading 1 (keyed traces written before `noise_version`): a CPU generator seeded per (seed, pos, purpose
    [, token]), one per row of race noise, one per relaxation uniform."""
    version = 1

    def _draw_rows(self, positions, device):
        """log E, drawn one generator per row, scored as sampling.race_scores does (to its bits)."""
        return torch.stack([race_noise(self.seed, p, self.vocab) for p in positions]).log().to(device)

    @staticmethod
    def _score(laws, rows):
        return log_race_scores(laws, rows)

    def uniform(self, pos, purpose, code=0):
        return float(keyed_uniforms(self.seed, pos, purpose, 1, code)[0])

    def uniforms_at(self, pos, purpose, codes):
        xs = codes.tolist()                          # reading 1 seeds a generator per value: it needs the codes
        return torch.stack([keyed_uniforms(self.seed, pos + i, purpose, 1, x)[0]
                            for i, x in enumerate(xs)]).to(codes.device)


def orders_of(top: list, widths: list[int]) -> list[list[int]]:
    """Noise.orders_t's rows read back (nested lists, or one flat list of them): each row's first min(width, support)
    finishers."""
    w = len(top) // max(1, len(widths)) if top and not isinstance(top[0], list) else 0
    rows = [top[i * w:(i + 1) * w] for i in range(len(widths))] if w else top
    return [[int(t) for t in row[1:1 + min(k, int(row[0]))]] for row, k in zip(rows, widths)]


READINGS = {1: NoiseV1, 2: Noise}                 # noise_version -> the reading


def version_of(config: dict) -> int:
    """The keyed reading a trace's config was written with (1 when it does not say: older traces)."""
    return int(config.get("noise_version", 1))
