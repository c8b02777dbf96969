"""Fast paths give the same numbers as the slower code they replace."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from logdoctor.analyzers import confounders
from logdoctor.analyzers.spectral import gamma_logsf


@pytest.mark.parametrize("n", [5, 20, 44, 45, 46, 1000, 3001])
@pytest.mark.parametrize("window", [6, 7, 15])
@pytest.mark.parametrize("center", [True, False])
def test_rolling_median_equals_polars(n: int, window: int, center: bool) -> None:
    f = np.random.default_rng(n * window).standard_cauchy(n)
    fast = confounders._rolling_median(f, window, center=center)
    slow = confounders._rolling_median_pl(f, window, center=center)
    np.testing.assert_array_equal(fast, slow)


def test_gamma_logsf_equals_scipy_stats() -> None:
    x = np.array([0.0, 1e-9, 0.5, 3.0, 10.0, 80.0, 400.0, 2000.0, 1e5] * 3)
    a = np.repeat([1, 5, 41], 9)
    np.testing.assert_allclose(gamma_logsf(x, a), stats.gamma.logsf(x, a), rtol=1e-12)
