"""The mutation check's protocol: a plausible wrong variant of a rule, and the fast checks that must catch it.

Each `tests/mutation/mutants_*.py` module exports VARIANTS, a list of Mutant; tests/mutation/test_mutation.py applies
each one by
monkeypatching and requires at least one of its detectors to fail (raise AssertionError). Detectors are plain
functions without fixtures, fast (exact enumeration, not sampling), and pass on the real code (each is also an
ordinary test elsewhere, or called by one).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import pytest


@dataclass(frozen=True)
class Mutant:
    name: str
    apply: Callable[[pytest.MonkeyPatch], None]      # installs the wrong variant
    detectors: tuple                                 # plain callables; at least one must raise AssertionError


def browser_available(chromium: str = "/usr/bin/chromium") -> bool:
    """Whether a browser detector can run here: Python Playwright installed and Debian's Chromium present (the
    browser mutants are left out of the check, not failed, where it cannot)."""
    try:
        import playwright.sync_api  # noqa: F401, PLC0415 - only whether it is installed
    except ImportError:
        return False
    return os.path.exists(chromium)
