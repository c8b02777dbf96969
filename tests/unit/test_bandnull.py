"""The band statistic's null with an estimated background and drifting noise variance (bandnull), and
the real-shape Gamma tail it needs (tails.gamma_logsf_real), against scipy and simulation."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import integrate, special, stats

from logdoctor.detectors import bandnull
from logdoctor.detectors.spectral import periodogram
from logdoctor.stats.distributions import gamma_logsf, gamma_logsf_real


def test_real_shape_gamma_tail_equals_scipy() -> None:
    rng = np.random.default_rng(0)
    a = np.exp(rng.uniform(math.log(0.5), math.log(700.0), 4000))
    x = a * np.exp(rng.uniform(-3.0, 1.5, a.size))
    want = special.gammaincc(a, x)
    normal = want > 1e-290  # scipy's subnormal results carry few digits
    got = np.exp(gamma_logsf_real(x, a))
    assert normal.sum() > 3900
    np.testing.assert_allclose(got[normal], want[normal], rtol=1e-9, atol=0.0)


def test_real_shape_gamma_tail_matches_the_integer_closed_form_and_keeps_far_tails() -> None:
    x = np.array([0.0, 1e-9, 3.9, 4.1, 40.0, 800.0])
    a = np.full(x.size, 3.0)
    np.testing.assert_allclose(gamma_logsf_real(x, a), gamma_logsf(x, a), rtol=1e-11, atol=1e-300)
    assert gamma_logsf_real(np.array([1000.0]), np.array([1.0]))[0] == pytest.approx(-1000.0, rel=1e-12)


def _quad(stat: float, b: float, var: float, n: float) -> float:
    """P(band statistic > stat) by adaptive quadrature over u = F(M) ~ Beta(r, r)."""
    shape, rate, r = b * b / var, stat * b / (var * math.log(2.0)), 0.5 * (n + 1.0)

    def f(u: float) -> float:
        return float(stats.beta.pdf(u, r, r) * special.gammaincc(shape, rate * -math.log1p(-u)))

    pts = [-math.expm1(-m) for m in (0.01, 0.05, 0.2, 0.5, 0.69, 1.0)]
    return float(integrate.quad(f, 0.0, 1.0, points=pts, epsabs=0.0, epsrel=1e-13, limit=500)[0])


@pytest.mark.parametrize(
    ("stat", "b", "var", "n"),
    [
        (5, 3, 3, 31),
        (20, 3, 3, 31),
        (60, 9, 12.5, 31),
        (10, 3, 4.2, 15.3),
        (40, 9, 9, 301),
        (300, 41, 41, 2501),
        (0.5, 3, 3, 31),
    ],
)
def test_band_tail_equals_quadrature(stat: float, b: float, var: float, n: float) -> None:
    got = math.exp(bandnull.band_logsf(np.array([stat]), np.array([b]), np.array([var]), np.array([n]))[0])
    assert got == pytest.approx(_quad(stat, b, var, n), rel=1e-9)


def test_band_tail_is_heavier_than_gamma_and_tends_to_it_with_a_wide_background() -> None:
    stat, b = np.array([0.0, 20.0, 20.0]), np.array([3.0, 3.0, 3.0])
    logp = bandnull.band_logsf(stat, b, b, np.array([31.0, 31.0, 1e6]))
    gamma = gamma_logsf(stat[1:], b[1:].astype(np.int64))
    assert logp[0] == pytest.approx(0.0, abs=1e-12)
    assert logp[1] > gamma[0] + math.log(100.0)  # the estimated background: >100x the Gamma tail here
    assert logp[2] == pytest.approx(gamma[1], rel=2e-3)


def _ordinate_corr_simulated(s: np.ndarray, lag: int, sims: int = 3000) -> float:
    rng = np.random.default_rng(7)
    x = s * rng.normal(size=(sims, s.size))
    p = np.abs(np.fft.rfft(x - x.mean(axis=1, keepdims=True), axis=1)) ** 2
    mid = p[:, 20 : s.size // 2 - 20]  # away from DC and Nyquist
    a, c = mid[:, :-lag].ravel(), mid[:, lag:].ravel()
    return float(np.corrcoef(a, c)[0, 1])


def test_ordinate_correlation_is_near_zero_for_constant_variance_and_matches_simulation_when_it_drifts() -> None:
    n = 400
    t = np.arange(n)
    white = np.random.default_rng(1).normal(size=n)
    assert np.all(bandnull.ordinate_correlation(white, 8)[1:] < 0.02)
    s = 0.2 + 4.0 * np.exp(-t / 60.0)  # additive noise on a decaying loss, seen in log space
    rho = bandnull.ordinate_correlation(s * np.random.default_rng(2).normal(size=n), 4)
    assert rho[0] == 1.0 and rho[1] > 0.2
    for lag in (1, 2):
        assert rho[lag] == pytest.approx(_ordinate_corr_simulated(s, lag), abs=0.08)


def test_band_variance_and_effective_bins() -> None:
    none = np.concatenate(([1.0], np.zeros(40)))
    assert bandnull.band_variance(none, 5) == 5.0 and bandnull.effective_bins(none, 31) == 31.0
    some = np.concatenate(([1.0, 0.5, 0.25], np.zeros(38)))
    assert bandnull.band_variance(some, 3) == pytest.approx(3 + 2 * (2 * 0.5 + 1 * 0.25))
    assert bandnull.effective_bins(some, 31) < 31.0


def test_peak_tests_need_no_scipy_and_are_more_conservative_than_the_plain_gamma_tail() -> None:
    code = (
        "import sys, numpy as np\n"
        "from logdoctor.detectors.spectral import spectrum, peak_tests\n"
        "from logdoctor.stats.distributions import gamma_logsf\n"
        "st = np.arange(400.0); x = np.random.default_rng(3).normal(size=400) + 0.6 * np.sin(st / 3)\n"
        "pk = peak_tests(spectrum(st, x), 400.0, top=1)[0]\n"
        "plain = float(np.exp(gamma_logsf(np.array([pk.statistic]), np.array([3]))[0]))\n"
        "assert 0 < 100 * 200 * plain < pk.p_value < 1e-3, (plain, pk)\n"  # Bonferroni: <= 200 bands
        "assert 'scipy' not in sys.modules and 'scipy.special' not in sys.modules\n"  # not a lone extension
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_periodogram_of_the_simulation_helper_is_the_spectral_one() -> None:
    """Control for the simulation above: its rfft power is the spectral periodogram up to scale."""
    x = np.random.default_rng(4).normal(size=64)
    _, p = periodogram(x - x.mean(), 1.0)
    raw = np.abs(np.fft.rfft(x - x.mean())) ** 2
    np.testing.assert_allclose(p[1:32] / raw[1:32], np.full(31, 2.0 / 64**2), rtol=1e-12)
