"""Mutation-check variants for the run's randomness (engine/randomness.py) and keyed reading 2's counter hash
(core/noise.py) (protocol: tests/support/mutants.py)."""
from __future__ import annotations

import torch

from specviz.core import noise
from specviz.engine import randomness
from tests.engine.test_noise_chosen_once import test_the_scan_finds_a_planted_check
from tests.engine.test_noise_hash import (
    test_a_keyed_trace_records_its_reading,
    test_equal_keys_give_equal_values_on_every_block_shape,
    test_kept_rows_do_not_depend_on_the_order_asked,
    test_reading_2_accept_uniforms_equal_the_single_values,
    test_the_int32_arithmetic_wraps_as_the_python_reference,
    test_uniform_in_the_unit_interval,
)
from tests.support.mutants import Mutant


def _mix_arithmetic_shift(x: torch.Tensor) -> torch.Tensor:
    """Wrong: torch's >> on int32 taken as logical (no mask): the sign bit smears into the high bits."""
    x = x ^ (x >> 16)
    x = x * noise._signed(noise._A)
    x = x ^ (x >> 15)
    x = x * noise._signed(noise._B)
    return x ^ (x >> 16)


def _unit_low_bits(z: torch.Tensor) -> torch.Tensor:
    """Wrong: the low 24 bits as the uniform while the host takes the top 24."""
    return (z & 0xFFFFFF).float() * 2.0 ** -24


def _block_by_row(seed, positions, purpose, vocab, device=None):
    """Wrong: a block's rows keyed by their index in the block, not by their position."""
    codes = noise.code_hash_t(torch.arange(vocab, device=device))
    keys = torch.tensor([noise._signed(noise.row_key(seed, i, purpose)) for i in range(len(positions))],
                        dtype=torch.int32, device=device)
    return noise._unit_t(noise.mix_t(codes[None] ^ keys[:, None]))


def _uniform_over_full_range(z: int) -> float:
    """Wrong: the 32-bit hash divided by 2^32 - 1, so 1.0 is reachable (and E = -log(1 - u) infinite)."""
    return z / 0xFFFFFFFF


class _KeyedWithoutRecord(randomness.Keyed):
    """Wrong: a keyed run that does not record its reading (an old reader would take it for reading 1)."""

    def __init__(self, seed, vocab, version=noise.VERSION):
        super().__init__(seed, vocab, version)
        self.record = {}


def _accept_us_from_position_zero(self, pos, x):
    """Wrong: the chain's uniforms keyed from position 0 of the window, not from its first draft's position."""
    return self.uniforms_at(0, "accept", x)


def _move_one_row_off(self, pos, k, dev):
    """Wrong: the window's overlap copied one row off (the old window's rows shifted by one position)."""
    cap, old, b0 = max(2 * k, noise._WINDOW), self._buf, self._b0
    buf = self._draw_rows(list(range(pos, pos + cap)), dev)
    if old is not None and b0 < pos < b0 + len(old) - 1:
        n = min(b0 + len(old), pos + cap) - pos - 1
        buf[:n] = old[pos - b0 + 1:pos - b0 + 1 + n]
    self._buf, self._b0 = buf, pos


VARIANTS = [
    Mutant("hash: arithmetic right shift taken as logical",
           lambda mp: mp.setattr(noise, "mix_t", _mix_arithmetic_shift),
           (test_the_int32_arithmetic_wraps_as_the_python_reference,)),
    Mutant("hash: the block's uniform from the low bits", lambda mp: mp.setattr(noise, "_unit_t", _unit_low_bits),
           (test_the_int32_arithmetic_wraps_as_the_python_reference,
            test_equal_keys_give_equal_values_on_every_block_shape)),
    Mutant("hash: block rows keyed by index, not position",
           lambda mp: mp.setattr(noise, "uniform_block", _block_by_row),
           (test_equal_keys_give_equal_values_on_every_block_shape,)),
    Mutant("hash: uniform reaches 1.0", lambda mp: mp.setattr(noise, "to_unit", _uniform_over_full_range),
           (test_equal_keys_give_equal_values_on_every_block_shape, test_uniform_in_the_unit_interval)),
    Mutant("keyed run records no noise_version", lambda mp: mp.setitem(randomness.KINDS, "keyed", _KeyedWithoutRecord),
           (test_a_keyed_trace_records_its_reading,)),
    Mutant("keyed target_sample left absent",
           lambda mp: mp.setattr(randomness.Keyed, "target_sample", lambda self, token: None),
           (test_a_keyed_trace_records_its_reading,)),
    Mutant("papers' bound dropped", lambda mp: mp.setattr(randomness.Papers, "promises", False),
           (test_a_keyed_trace_records_its_reading,)),
    Mutant("keyed bound summed as the papers'", lambda mp: mp.setattr(randomness.Keyed, "promises", True),
           (test_a_keyed_trace_records_its_reading,)),
    Mutant("chain uniforms keyed from position 0",
           lambda mp: mp.setattr(noise.Noise, "accept_us", _accept_us_from_position_zero),
           (test_reading_2_accept_uniforms_equal_the_single_values,)),
    Mutant("kept window's overlap copied one row off", lambda mp: mp.setattr(noise.Noise, "_move", _move_one_row_off),
           (test_kept_rows_do_not_depend_on_the_order_asked,)),
    Mutant("noise scan blind to `is None`",
           lambda mp: mp.setattr("tests.engine.test_noise_chosen_once._names_noise", lambda node: False),
           (lambda: [test_the_scan_finds_a_planted_check(s) for s in
                     ("x = a if self.noise is None else b", "if self.noise:\n    pass")],)),
]
