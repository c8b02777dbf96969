"""The null distribution of spectral.peak_tests' band statistic, for noise whose variance drifts.

Under the null the periodogram ordinates are I_k = S_k E_k with E_k ~ Exp(1), and the statistic is
the sum over a band of b bins of I_k / (background / ln 2), the background being the median of the
ordinates in a window of n bins. Two things make "stat ~ Gamma(b)" anti-conservative:

1. The background is estimated: M, the median of n Exp(1), has ~26% relative sd at n = 31, so
   stat = ln 2 * Gamma / M has a heavier tail. P(stat > x) = E_M[Q(shape, x M / (ln 2 scale))], M's
   law being that of the ((n+1)/2)-th order statistic of n Exp(1) (u = 1 - e^-M ~ Beta(r, r)).
2. Noise whose variance drifts over the run (x_t = s_t e_t: additive noise on a decaying loss, seen
   in log space) correlates neighbouring ordinates: rho_d = |DFT(s^2)[d]|^2 / DFT(s^2)[0]^2 for bins
   d apart, so a band sum has variance b + 2 sum_{d<b} (b - d) rho_d, not b; the sum is taken as
   the Gamma with mean b and that variance. The same correlation shrinks the background's
   effective number of independent bins, n / (1 + 2 sum_d (1 - d/n) rho_d).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from logdoctor.detectors.robust import FloatArray
from logdoctor.stats.distributions import gamma_logsf_real

#: Median of chi-squared with 1 degree of freedom: median(e^2) / sigma^2 for Gaussian e.
CHI2_1_MEDIAN = 0.454936423119572
#: The running variance s_t^2 is a median of x_t^2 over blocks of this share of the run (>= 31 rows).
VAR_BLOCK_FRACTION = 0.1
#: Gauss-Legendre nodes over the part of M's range where the integrand lives.
_NODES = 48
#: The integrand is kept where its log is within this of its maximum (e^-46 ~ 1e-20 relative).
_LOG_SPAN = 46.0


@functools.cache
def _gauss_legendre() -> tuple[FloatArray, FloatArray]:
    nodes, weights = np.polynomial.legendre.leggauss(_NODES)
    return np.asarray(nodes, dtype=np.float64), np.asarray(weights, dtype=np.float64)


def ordinate_correlation(grid: FloatArray, max_lag: int) -> FloatArray:
    """rho_d, d = 0 .. max_lag - 1: the correlation of periodogram ordinates d bins apart when the
    series is x_t = s_t e_t with white e_t; s_t^2 is a median of x_t^2 / CHI2_1_MEDIAN over blocks of
    VAR_BLOCK_FRACTION of the run, interpolated between block centres. Constant variance gives rho_d ~ 0."""
    n = grid.size
    if n < 2 or max_lag < 1:
        return np.ones(max(0, max_lag))
    size = max(31, int(VAR_BLOCK_FRACTION * n))
    blocks = max(1, n // size)
    sq = np.asarray(grid, dtype=np.float64)[: blocks * size] ** 2
    med = np.median(sq.reshape(blocks, size), axis=1) / CHI2_1_MEDIAN
    centres = (np.arange(blocks) + 0.5) * size
    s2 = np.interp(np.arange(n, dtype=np.float64), centres, med)
    spec = np.fft.rfft(s2)
    if not spec[0].real > 0:
        return np.concatenate(([1.0], np.zeros(max_lag - 1)))
    rho = np.abs(spec[:max_lag]) ** 2 / spec[0].real ** 2
    return np.concatenate((rho, np.zeros(max_lag - rho.size)))


def gamma_z(x: FloatArray, b: FloatArray) -> FloatArray:
    """Wilson-Hilferty z of ``x`` under Gamma(b): ((x/b)^(1/3) - 1 + 1/(9b)) sqrt(9b); equal z, nearly
    equal tails across shapes, for ranking bands before their tails are computed."""
    return np.asarray((np.cbrt(x / b) - 1.0 + 1.0 / (9.0 * b)) * np.sqrt(9.0 * b), dtype=np.float64)


def band_variance(rho: FloatArray, b: int) -> float:
    """Variance of the sum of ``b`` adjacent unit-variance ordinates correlated ``rho[d]`` d bins apart."""
    d = np.arange(1, b)
    return float(b + 2.0 * np.sum((b - d) * rho[1:b]))


def effective_bins(rho: FloatArray, n: int) -> float:
    """Independent bins worth of a background window of ``n`` bins whose ordinates correlate ``rho``."""
    d = np.arange(1, min(n, rho.size))
    return float(n / (1.0 + 2.0 * np.sum((1.0 - d / n) * rho[1 : d.size + 1])))


def band_logsf(stat: FloatArray, b: FloatArray, var: FloatArray, n_bg: FloatArray) -> FloatArray:
    """log P(band statistic > ``stat``) for bands of ``b`` bins, band-sum variance ``var`` and a
    background median over ``n_bg`` independent bins: log E_M[Q(b^2/var, stat M var / (b ln 2))].

    The expectation over M is taken in t = log M, where the log integrand is concave: a coarse scan
    and two zoomed ones find its peak and the span within _LOG_SPAN of it, and Gauss-Legendre integrates that.
    """
    stat, b, var, n_bg = (np.asarray(v, dtype=np.float64).reshape(-1, 1) for v in (stat, b, var, n_bg))
    shape, rate = b * b / var, np.maximum(stat, 0.0) * b / (var * math.log(2.0))
    r = 0.5 * (np.maximum(n_bg, 1.0) + 1.0)  # M ~ r-th of 2r - 1: u = 1 - e^-M ~ Beta(r, r)
    log_norm = np.array([[2.0 * math.lgamma(v) - math.lgamma(2.0 * v)] for v in r[:, 0]]).reshape(-1, 1)

    def log_integrand(t: FloatArray) -> FloatArray:
        m = np.exp(t)
        log_dens = (r - 1.0) * np.log(-np.expm1(-m)) - r * m - log_norm + t  # density of t = log M
        return log_dens + gamma_logsf_real(rate * m, np.broadcast_to(shape, m.shape))

    rows = np.arange(stat.size)
    grid = np.broadcast_to(np.linspace(-18.0, 4.0, 45), (stat.size, 45))
    vals = log_integrand(grid)
    # zoom in twice: the peak's width in t is ~1.4 / sqrt(n), down to ~0.01 for the widest windows
    for half_width in (np.full((stat.size, 1), 0.5), np.minimum(0.25, 18.0 / np.sqrt(2.0 * r))):
        top = grid[rows, np.argmax(vals, axis=1)].reshape(-1, 1)
        zoom = top + half_width * np.linspace(-1.0, 1.0, 41)
        grid, vals = np.concatenate((grid, zoom), axis=1), np.concatenate((vals, log_integrand(zoom)), axis=1)
    order = np.argsort(grid, axis=1)
    grid, vals = np.take_along_axis(grid, order, 1), np.take_along_axis(vals, order, 1)
    keep = vals >= vals.max(axis=1, keepdims=True) - _LOG_SPAN
    cols = np.arange(grid.shape[1])
    first = np.maximum(np.where(keep, cols, cols.size).min(axis=1) - 1, 0)
    last = np.minimum(np.where(keep, cols, -1).max(axis=1) + 1, cols.size - 1)
    lo, hi = grid[rows, first], grid[rows, last]
    x, w = _gauss_legendre()
    half = (0.5 * (hi - lo)).reshape(-1, 1)
    t = (0.5 * (hi + lo)).reshape(-1, 1) + half * x
    lv = log_integrand(t) + np.log(half * w)
    peak = lv.max(axis=1, keepdims=True)
    return np.asarray(np.minimum(0.0, peak[:, 0] + np.log(np.exp(lv - peak).sum(axis=1))), dtype=np.float64)
