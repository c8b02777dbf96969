"""Analysis steps done in one batch give, bit for bit, what the step-by-step definition gives."""

from __future__ import annotations

import numpy as np
import pytest

from logdoctor.diagnosis import fixedorder


@pytest.mark.parametrize("seed", range(4))
def test_shifted_null_in_one_batch_equals_one_shift_at_a_time(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 1500))
    sizes = [n, *rng.integers(n, n + 300, size=int(rng.integers(0, 7)))]
    pairs = [(rng.normal(size=m) * rng.uniform(0.1, 10), rng.normal(size=m)) for m in sizes]
    pairs[-1] = (pairs[-1][0], np.zeros(sizes[-1]))  # a constant epoch (standard deviation 0)
    shifts = np.unique(np.linspace(2, n - 2, fixedorder.NULL_SHIFTS).round().astype(int))
    x = fixedorder._firsts(pairs)
    monkeypatch.setattr(fixedorder, "_BLOCK", int(rng.integers(1, 3 * x.size)))  # blocks of one row and up
    want = np.array([fixedorder._r(pairs, int(s), x) for s in shifts])
    assert np.array_equal(fixedorder._shifted_rs(pairs, shifts, x), want)


@pytest.mark.parametrize("columns", [1, 2, 4, 6])
def test_vander_by_columns_equals_numpys(columns: int) -> None:
    from logdoctor.diagnosis.lengthstats import _vander

    u = np.random.default_rng(columns).normal(size=1001) * 3
    assert np.array_equal(_vander(u, columns), np.vander(u, columns))
