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


def _median_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    out = [rng.normal(size=n) for n in (1, 2, 3, 4, 5, 8, 9, 100, 101, 4096)]
    zeros = [[-0.0, -0.0], [-0.0, -0.0, -0.0], [-0.0, 0.0, -0.0, -0.0], [0.0, -0.0], [-0.0]]
    odd = [[np.inf, -np.inf], [np.inf, np.inf, 1.0, 2.0], [1.0, np.nan, 2.0], [np.nan, np.nan], [-np.nan, 3.0]]
    out += [np.array(v) for v in zeros + odd]
    out += [rng.integers(0, 3, size=50).astype(float), np.full(7, 1e308)]
    return out


@pytest.mark.parametrize("x", _median_inputs(), ids=str)
def test_median_equals_numpys_bit_for_bit(x: np.ndarray) -> None:
    from logdoctor.detectors.robust import median

    with np.errstate(invalid="ignore"):  # inf - inf, in both
        got, want = median(x), np.median(x)
    assert type(got) is type(want) and np.array_equal(np.array([got]).view(np.int64), np.array([want]).view(np.int64))


_STEPS = [*_median_inputs()[:10], np.r_[0.0, -0.0, 0.0, -0.0, 1.0], np.r_[1.0, np.nan, 2.0, 4.0]]


@pytest.mark.parametrize("x", _STEPS, ids=str)
def test_noise_sigma_in_place_equals_the_copying_definition(x: np.ndarray) -> None:
    from logdoctor.detectors.robust import MAD_TO_SIGMA, noise_sigma

    x = np.cumsum(x)
    d = np.diff(x)
    want = float(MAD_TO_SIGMA * np.median(np.abs(d - np.median(d))) / np.sqrt(2.0)) if x.size >= 3 else 0.0
    got = noise_sigma(x.copy())
    assert got == want or (np.isnan(got) and np.isnan(want))
