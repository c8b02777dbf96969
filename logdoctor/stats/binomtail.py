"""Binomial tails of a million trials without scipy.special (its import is ~0.25 s of a run's CPU).

tails.binom_sf sends shapes above ``tails._MAX_SHAPE`` to ``scipy.special.betainc``: there the
lgamma differences of the continued fraction lose digits. A run of more than ``LARGE_N`` trials
(the sign test of a 1M-step log's batch lengths) takes this path instead: the largest term of the
tail by Loader's saddle-point form of the binomial probability (C. Loader, "Fast and accurate
computation of binomial probabilities", 2000: Stirling-series errors and a deviance ``bd0`` computed
without cancellation, as R's dbinom), the others by the ratio of consecutive terms, summed until
they no longer count. Not the same bits as scipy's: agreement to 1e-9 relative
(tests/unit/test_binomtail.py, n from 1e5 to 1e7, p from 0.01 to 0.99, tails down to 1e-300).
"""

from __future__ import annotations

import math

import numpy as np

#: More trials than this: the tail is summed here, not by scipy.special.betainc.
LARGE_N = 100_000
_LN_2PI = math.log(2.0 * math.pi)


def _stirlerr(n: float) -> float:
    """log(n!) - log(sqrt(2 pi n) (n/e)^n): the error of Stirling's formula."""
    if n <= 35.0:
        return math.lgamma(n + 1.0) - (n + 0.5) * math.log(n) + n - 0.5 * _LN_2PI if n > 0 else 0.0
    nn = n * n
    s0, s1, s2, s3 = 1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680
    if n > 500.0:
        return (s0 - s1 / nn) / n
    if n > 80.0:
        return (s0 - (s1 - s2 / nn) / nn) / n
    return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n


def _bd0(x: float, mean: float) -> float:
    """x log(x / mean) + mean - x, the binomial deviance term, without cancellation near x = mean."""
    if abs(x - mean) < 0.1 * (x + mean):
        v = (x - mean) / (x + mean)
        s = (x - mean) * v
        ej = 2.0 * x * v
        v2 = v * v
        for j in range(1, 1000):
            ej *= v2
            s1 = s + ej / (2 * j + 1)
            if s1 == s:
                return s1
            s = s1
        return s
    return x * math.log(x / mean) + mean - x


def _log_pmf(x: int, n: int, p: float, q: float) -> float:
    """log P(X = x) for X ~ Binomial(n, p), 0 < x < n (Loader's form)."""
    lc = _stirlerr(n) - _stirlerr(x) - _stirlerr(n - x) - _bd0(x, n * p) - _bd0(n - x, n * q)
    return lc - 0.5 * (_LN_2PI + math.log(x) + math.log1p(-x / n))


def _edge_log_pmf(x: int, n: int, p: float, q: float) -> float:
    if x == 0:
        return n * math.log1p(-p) if p < 0.5 else n * math.log(q)
    if x == n:
        return n * math.log(p)
    return _log_pmf(x, n, p, q)


def _run(start: int, stop: int, step: int, n: int, p: float, q: float) -> float:
    """Sum of P(X = j) for j from ``start`` towards ``stop`` (inclusive) by ``step`` (+1 or -1),
    ``start`` being the largest term: consecutive ratios, stopped once the terms add < 1e-17."""
    width = int(40.0 * math.sqrt(n * p * q) + 60.0)
    end = min(stop, start + width) if step > 0 else max(stop, start - width)
    j = np.arange(start, end, step, dtype=np.float64)  # the terms after ``start``: from j to j + step
    ratio = (n - j) / (j + 1.0) * (p / q) if step > 0 else j / (n - j + 1.0) * (q / p)
    terms = np.cumprod(ratio)
    return math.exp(_edge_log_pmf(start, n, p, q)) * (1.0 + float(terms.sum()))


def binom_sf(k: int, n: int, p: float, q: float) -> float:
    """P(X > k) for X ~ Binomial(n, p), 0 <= k < n, ``q`` = 1 - p (= ``scipy.stats.binom.sf``)."""
    mode = math.floor((n + 1) * p)
    if k + 1 >= mode:  # the upper tail, summed from its largest term up
        return min(1.0, _run(k + 1, n, 1, n, p, q))
    # the upper tail holds the mode: 1 minus the lower tail, summed from its largest term (k) down
    return max(0.0, 1.0 - _run(k, 0, -1, n, p, q))
