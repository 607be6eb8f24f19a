"""Which cases of a parametrised test the default run keeps (pyproject's `extended` marker; README "Run the tests").

The default run (`python -m pytest -n 2`, CI) keeps every test function and, of a screens x method-counts matrix, its
diagonal: each screen once and each method count once; a test over screens alone runs on one screen (`one`), chosen
per test so that every screen is some test's. The other cases carry `extended` and run with
`python -m pytest -n 2 -m extended` (or everything: `-m "extended or not extended"`)."""
from __future__ import annotations

import pytest


def diagonal(views, counts) -> list:
    """(view, count) for every view x count, ids "view-count"; the i-th view with the i-th count runs by default,
    the rest are `extended`."""
    views, counts = list(views), list(counts)
    assert len(views) == len(counts), "a diagonal needs as many screens as method counts"
    return [pytest.param(v, n, id=f"{v}-{n}", marks=() if i == j else (pytest.mark.extended,))
            for i, v in enumerate(views) for j, n in enumerate(counts)]


def first(values, keep: int) -> list:
    """`values` as cases: the first `keep` run by default, the rest are `extended`."""
    return [pytest.param(*(v if isinstance(v, tuple) else (v,)), marks=() if i < keep else (pytest.mark.extended,))
            for i, v in enumerate(values)]


def one(views, keep: str) -> list:
    """`views` as cases, ids the views; only `keep` runs by default, the rest are `extended`."""
    views = list(views)
    assert keep in views, f"{keep} is not among {views}"
    return [pytest.param(v, id=v, marks=() if v == keep else (pytest.mark.extended,)) for v in views]
