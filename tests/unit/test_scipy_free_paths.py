"""Start-up paths without scipy: the occupancy tails, log-gammas and wide rolling medians equal scipy's."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from logdoctor.diagnosis import occupancy
from logdoctor.stats.distributions import binom_cdf, lgamma_of_integers, nbinom_cdf


@pytest.mark.parametrize("n", [1, 2, 7, 40, 333, 5000, 120_000, 3_000_000])
@pytest.mark.parametrize("p", [1e-6, 0.01, 0.2, 0.5, 0.93, 1.0])
def test_binom_cdf_equals_scipy(n: int, p: float) -> None:
    mean = n * p
    for k in {-1.0, 0.0, 0.5, 1.0, mean / 4, mean / 2, mean - 3 * np.sqrt(mean + 1), mean, n - 1.0, float(n)}:
        want = float(stats.binom.cdf(np.floor(k), n, p))
        assert binom_cdf(k, n, p) == pytest.approx(want, rel=1e-9, abs=1e-300), (k, n, p)


@pytest.mark.parametrize("r", [0.3, 1.0, 4.5, 80.0, 2500.0, 4e5, 5e6])
@pytest.mark.parametrize("p", [0.05, 0.4, 0.9, 0.999])
def test_nbinom_cdf_equals_scipy(r: float, p: float) -> None:
    mean = r * (1 - p) / p
    for k in {-1.0, 0.0, 1.0, 2.7, mean / 10, mean / 2, mean, 3 * mean + 5}:
        want = float(stats.nbinom.cdf(np.floor(k), r, p))
        assert nbinom_cdf(k, r, p) == pytest.approx(want, rel=1e-9, abs=1e-300), (k, r, p)


def test_lgamma_of_integers_equals_gammaln() -> None:
    rng = np.random.default_rng(3)
    for v in (np.arange(1, 3000), rng.integers(1, 2_000_000, 20_000), np.array([5, 5, 5]), np.array([10**9, 2])):
        np.testing.assert_allclose(lgamma_of_integers(v), special.gammaln(v.astype(float)), rtol=1e-14)


def _chance_scipy(ids: np.ndarray, epoch: np.ndarray) -> float:
    """The former scipy.special.gammaln implementation of ``occupancy.chance``."""
    n_tot = float(ids.size)
    c = np.bincount(ids)[ids].astype(float)
    before = np.cumsum(np.bincount(epoch))[epoch] - np.bincount(epoch)[epoch]
    later = epoch >= 1
    b, cc = before[later].astype(float), c[later]
    free = n_tot - 1 - b
    g = special.gammaln
    log_none = np.where(free >= cc - 1, g(free + 1) - g(free - cc + 2) - g(n_tot) + g(n_tot - cc + 1), -np.inf)
    return float(np.mean(1 - np.exp(log_none))) if b.size else 0.0


@pytest.mark.parametrize("n_sig", [3, 50, 4000, 10**6])
def test_chance_equals_the_scipy_version(n_sig: int) -> None:
    rng = np.random.default_rng(n_sig)
    ids = rng.integers(0, n_sig, 30_000)
    epoch = np.sort(rng.integers(0, 5, ids.size))
    assert occupancy.chance(ids, epoch) == pytest.approx(_chance_scipy(ids, epoch), rel=1e-10, abs=1e-15)
    assert occupancy.chance(ids, np.zeros_like(ids)) == 0.0


def test_the_occupancy_test_imports_no_scipy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, numpy as np; from logdoctor.diagnosis import occupancy as o;"
        "r = np.random.default_rng(1); ids = r.integers(0, 900, 3000); ep = np.repeat(np.arange(3), 1000);"
        "o.same_epoch_pairs(ids, ep); o.chance(ids, ep);"
        "print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("n", "window"), [(3334, 3333), (4000, 3999), (4000, 2001), (1500, 1400), (5000, 3001)])
@pytest.mark.parametrize("mode", ["nearest", "mirror", "reflect", "wrap"])
def test_whole_run_rolling_median_equals_ndimage(
    n: int, window: int, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without scipy's compiled filter, windows too wide for numpy's window view (robust.trend's
    whole-run window on block medians) fall back to scipy.ndimage: the same values, ties included."""
    from scipy import ndimage

    from logdoctor.stats import ndmedian, rolling

    monkeypatch.setattr(ndmedian, "median_filter", lambda *args: None)

    x = np.random.default_rng(n + window).standard_cauchy(n)
    x[::7] = x[3]
    got = rolling.rolling_median(x, window, mode=mode)
    np.testing.assert_array_equal(got, ndimage.median_filter(x, size=window | 1, mode=mode))


@pytest.mark.parametrize("df", [0.3, 1.0, 1.5, 2.0, 3.0, 3.7, 4.0, 10.0, 300.0])
def test_student_t_sf_and_quantile_equal_scipy(df: float) -> None:
    from logdoctor.stats.distributions import t_ppf, t_sf

    assert t_ppf(0.75, df) == pytest.approx(float(stats.t.ppf(0.75, df)), rel=1e-12)
    for x in (-3.0, 0.0, 0.1, 1.0, 2.5, 10.0, 50.0, 300.0, 1e4, 1e6):
        assert t_sf(x, df) == pytest.approx(float(stats.t.sf(x, df)), rel=1e-11, abs=1e-300), x


@pytest.mark.parametrize("lam", [0.0, 1e-9, 1e-3, 0.2, 1.0, 3.3, 17.0, 250.0, 4000.0, 1e5])
def test_poisson_quantile_equals_scipy(lam: float) -> None:
    from logdoctor.stats.distributions import poisson_ppf

    for q in (0.5, 0.9, 0.95, 0.99, 0.999, 1 - 1e-6):
        assert poisson_ppf(q, lam) == int(stats.poisson.ppf(q, lam)), q


@pytest.mark.parametrize("n", [1, 3, 20, 400, 10_000, 200_000])
def test_binomial_sf_equals_scipy(n: int) -> None:
    from logdoctor.stats.distributions import binom_sf

    for p in (0.0, 1e-5, 0.01, 0.3, 0.9, 1.0):
        for k in (-1, 0, 1, n // 3, n // 2, n - 1, n):
            assert binom_sf(k, n, p) == pytest.approx(float(stats.binom.sf(k, n, p)), rel=1e-9, abs=1e-300)


def test_weighing_spikes_imports_no_scipy() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from logdoctor.detectors import spikenull as s;"
        "s.run_p_value(12.0, 30000, 3.0); s.null_count_limit(30000, 6.0, 3.0, 0.01);"
        "s.chance_coincidence_p(0.01, 5, 40, 6);"
        "print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("n", [1, 2, 9, 600, 30_000])
@pytest.mark.parametrize("mode", ["nearest", "mirror", "reflect", "wrap"])
def test_compiled_median_filter_equals_ndimage(n: int, mode: str) -> None:
    from scipy import ndimage

    from logdoctor.stats import ndmedian

    x = np.random.default_rng(n).standard_cauchy(n)
    x[::11] = x[0]
    if n > 100:
        x[50] = np.nan
    for size in sorted({1, 3, 7, 15, 301, 1001, n | 1, (2 * n) | 1}):
        got = ndmedian.median_filter(x, size, mode)
        if not 3 <= size <= n:
            assert got is None  # size 1 and windows past the series stay with the other paths
            continue
        assert got is not None
        np.testing.assert_array_equal(got, ndimage.median_filter(x, size=size, mode=mode))
    assert ndmedian.median_filter(x, 4, mode) is None  # even windows: scipy's origin rule, not ours
    assert ndmedian.median_filter(x, 3, "constant") is None


def test_the_compiled_median_filter_loads_without_scipy_ndimage() -> None:
    import subprocess
    import sys

    code = (
        "import sys, numpy as np; from logdoctor.detectors import robust;"
        "robust.rolling_median(np.random.default_rng(1).normal(size=50_000), 1001);"
        "print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['scipy.ndimage._rank_filter_1d']"
