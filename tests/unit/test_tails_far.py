"""stats/distributions.py against scipy.stats at extreme arguments: far tails keep their relative digits."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from logdoctor.stats import distributions as tails

REL = 1e-10  # relative only (abs=0): pytest.approx otherwise accepts anything within 1e-12 of a 1e-37 tail


@pytest.mark.parametrize(
    ("k", "lam"),
    [(40, 2.0), (50, 1.0), (30, 3.0), (100, 20.0), (5, 0.001), (21, 20.0), (1001, 1000.0), (3, 7.6), (1, 0.5)],
)
def test_poisson_sf_far_tail(k: int, lam: float) -> None:
    # 1 - cdf gave 2.2e-16 at (40, 2.0) where the tail is 1.9e-37
    assert tails.poisson_sf(k, lam) == pytest.approx(stats.poisson.sf(k - 1, lam), rel=REL, abs=0.0)


def test_poisson_sf_beyond_double_range_is_zero_not_negative() -> None:
    assert tails.poisson_sf(100_000, 10.0) == 0.0


@pytest.mark.parametrize(("k", "n", "p"), [(60, 100, 0.1), (99, 100, 0.5), (5, 10, 1e-6), (500, 1000, 0.3)])
def test_binom_sf_far_tail(k: int, n: int, p: float) -> None:
    assert tails.binom_sf(k, n, p) == pytest.approx(stats.binom.sf(k, n, p), rel=REL, abs=0.0)


@pytest.mark.parametrize(("k", "n", "p"), [(0, 1000, 0.5), (1, 100, 0.99), (400, 1000, 0.5)])
def test_binom_cdf_far_tail(k: int, n: int, p: float) -> None:
    assert tails.binom_cdf(k, n, p) == pytest.approx(stats.binom.cdf(k, n, p), rel=REL, abs=0.0)


@pytest.mark.parametrize(("k", "r", "p"), [(0, 50, 0.01), (3, 200, 0.1), (5, 100, 0.5)])
def test_nbinom_cdf_far_tail(k: int, r: float, p: float) -> None:
    assert tails.nbinom_cdf(k, r, p) == pytest.approx(stats.nbinom.cdf(k, r, p), rel=REL, abs=0.0)


@pytest.mark.parametrize(("x", "df"), [(50.0, 3), (1e3, 10), (40.0, 100), (1e10, 2), (-50.0, 3)])
def test_t_sf_far_tail(x: float, df: int) -> None:
    assert tails.t_sf(x, df) == pytest.approx(stats.t.sf(x, df), rel=REL, abs=0.0)
    if x > 0:
        assert tails.student_t_two_sided(x, df) == pytest.approx(2 * stats.t.sf(x, df), rel=REL, abs=0.0)


@pytest.mark.parametrize(("f", "d1", "d2"), [(1e3, 3, 100), (200.0, 10, 50), (1e6, 1, 1)])
def test_f_sf_far_tail(f: float, d1: int, d2: int) -> None:
    assert tails.f_sf(f, d1, d2) == pytest.approx(stats.f.sf(f, d1, d2), rel=REL, abs=0.0)


def test_gamma_logsf_far_tail() -> None:
    x = np.array([50.0, 500.0, 700.0, 2000.0])
    a = np.array([3, 10, 50, 1000])
    assert tails.gamma_logsf(x, a) == pytest.approx(stats.gamma.logsf(x, a), rel=REL, abs=0.0)
