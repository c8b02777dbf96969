"""Tail probabilities and quantiles of the tests logdoctor runs, in numpy and math alone.

scipy.special gives the same values, but importing it costs ~0.2-0.5 s (it pulls in scipy's
array-API layer), most of the analysis time of an everyday log. Each function here is tested
against scipy.special / scipy.stats to 1e-9..1e-14 relative error over the range logdoctor uses
(tests/unit/test_fast_equivalence.py, tests/unit/test_scipy_free_paths.py, tests/unit/test_bandnull.py).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from logdoctor.stats import binomtail

FloatArray = NDArray[np.float64]

#: Largest ``len(x) * max(a)`` summed term by term; beyond it scipy.special is cheaper.
_MAX_TERMS = 1_000_000


def gamma_logsf(x: FloatArray, a: FloatArray) -> FloatArray:
    """log P(Gamma(a) > x) for integer shapes ``a >= 1`` (= ``scipy.stats.gamma.logsf(x, a)``).

    For integer a the regularised incomplete gammas are Poisson sums: the upper one
    Q(a, x) = exp(-x) * sum_{k<a} x^k / k!, and the lower one P = exp(-x) * sum_{k>=a} x^k / k!.
    Both are summed in log space; where Q > 1/2 the answer is log1p(-P), as scipy does, so a tail
    near 1 keeps its digits. Falls back to scipy.special for other shapes or very large inputs.
    """
    x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    a = np.asarray(a)
    if a.size == 0:
        return np.zeros(0)
    kmax = int(a.max())
    n_terms = 2 * kmax + 100
    if not np.all(a == np.round(a)) or a.min() < 1 or x.size * n_terms > _MAX_TERMS:
        return _gamma_logsf_scipy(x, a)
    k = np.arange(n_terms, dtype=np.float64)
    log_fact = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n_terms, dtype=np.float64)))))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = k[None, :] * np.log(x)[:, None] - log_fact[None, :]
    terms[:, 0] = 0.0  # x^0 / 0! = 1, also at x = 0
    upper = k[None, :] < a.reshape(-1, 1)
    log_q = -x + _logsumexp(np.where(upper, terms, -np.inf))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = -x + _logsumexp(np.where(upper, -np.inf, terms))
        near_one = log_q > math.log(0.5)
        return np.where(near_one, np.log1p(-np.exp(np.where(near_one, log_p, -np.inf))), log_q)


def gamma_logsf_real(x: FloatArray, a: FloatArray) -> FloatArray:
    """log Q(a, x) = log P(Gamma(a) > x) for real shapes ``a > 0`` (= log ``scipy.special.gammaincc``).

    Below x = a + 1 the lower tail P comes from its power series and log Q = log1p(-P) (Q is not
    small there); above it Q itself comes from its continued fraction (modified Lentz), both scaled
    by x^a e^-x / Gamma(a) in log space, so far tails keep their digits where scipy underflows.
    ``x`` and ``a`` broadcast; each series stops once every element has converged.
    """
    x, a = np.broadcast_arrays(np.maximum(np.asarray(x, dtype=np.float64), 0.0), np.asarray(a, dtype=np.float64))
    out = np.zeros(x.shape)
    if x.size == 0:
        return out
    distinct, inv = np.unique(a, return_inverse=True)
    lga = np.array([math.lgamma(float(v)) for v in distinct])[inv.reshape(a.shape)]
    with np.errstate(divide="ignore"):
        log_front = a * np.log(x) - x - lga  # log(x^a e^-x / Gamma(a))
    cf = x >= a + 1.0
    ser = ~cf & (x > 0)
    if ser.any():
        xs, as_ = x[ser], a[ser]
        term, total = np.ones(xs.size), np.ones(xs.size)
        for n in range(1, 100_000):
            term = term * xs / (as_ + n)
            total += term
            if np.all(term <= 1e-17 * total):
                break
        out[ser] = np.log1p(-np.exp(log_front[ser]) * total / as_)
    if cf.any():
        out[cf] = log_front[cf] + np.log(_gamma_cf(x[cf], a[cf]))
    return out


def _gamma_cf(x: FloatArray, a: FloatArray) -> FloatArray:
    """The continued fraction of Q(a, x) e^x x^-a Gamma(a), for x >= a + 1 (Numerical Recipes' gcf)."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = np.full(x.size, 1.0 / tiny)
    d = 1.0 / b
    h = d.copy()
    for i in range(1, 100_000):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        step = d * c
        h *= step
        if np.all(np.abs(step - 1.0) < 1e-15):
            break
    return h


def _logsumexp(v: FloatArray) -> FloatArray:
    top = v.max(axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.asarray(top[:, 0] + np.log(np.exp(v - top).sum(axis=1)), dtype=np.float64)


def _gamma_logsf_scipy(x: FloatArray, a: FloatArray) -> FloatArray:
    from scipy import special  # heavy: only for shapes or sizes the closed form does not cover

    sf = special.gammaincc(a, x)
    with np.errstate(divide="ignore"):  # below the median scipy takes log1p(-cdf): same here
        return np.asarray(np.where(sf < 0.5, np.log(sf), np.log1p(-special.gammainc(a, x))), dtype=np.float64)


def student_t_two_sided(t: float, dof: int) -> float:
    """P(|T| >= |t|) for Student's t with ``dof`` degrees of freedom (= 2 * scipy.special.stdtr(dof, -|t|)).

    Through the regularised incomplete beta: P = I_{dof/(dof+t^2)}(dof/2, 1/2).
    """
    if dof < 1 or math.isnan(t):
        return float("nan")
    if math.isinf(t):
        return 0.0
    x, y = dof / (dof + t * t), t * t / (dof + t * t)  # y = 1 - x without cancellation
    return min(1.0, betainc(0.5 * dof, 0.5, x, y))


def _log_beta(a: float, b: float) -> float:
    """log B(a, b); for b = 1/2 and large a (Student's t with many degrees of freedom) through the
    asymptotic series of lgamma(a + 1/2) - lgamma(a), since the plain difference of two large
    lgammas loses ~1e-9 at a = 5e5."""
    if b != 0.5 or a < 50.0:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    # log Gamma(a + 1/2) - log Gamma(a) = log(a)/2 - 1/(8a) + 1/(192a^3) - 1/(640a^5) + 17/(14336a^7)
    inv = 1.0 / a
    ratio = 0.5 * math.log(a) - inv / 8 + inv**3 / 192 - inv**5 / 640 + 17 * inv**7 / 14336
    return math.lgamma(0.5) - ratio


def _beta_cf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return h


def f_sf(f: float, d1: float, d2: float) -> float:
    """P(F >= f) for the F distribution with (d1, d2) degrees of freedom (= ``scipy.stats.f.sf``).

    Through the regularised incomplete beta: P = I_{d2/(d2+d1 f)}(d2/2, d1/2).
    """
    if not f > 0:
        return 1.0
    if math.isinf(f):
        return 0.0
    x, y = d2 / (d2 + d1 * f), d1 * f / (d2 + d1 * f)  # y = 1 - x without cancellation
    return min(1.0, max(0.0, betainc(0.5 * d2, 0.5 * d1, x, y)))


def betainc(a: float, b: float, x: float, y: float | None = None) -> float:
    """Regularised incomplete beta I_x(a, b), with ``y`` = 1 - x when the caller has it exactly."""
    y = 1.0 - x if y is None else y
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = a * math.log(x) + b * math.log(y) - _log_beta(a, b)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_cf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_cf(b, a, y) / b


#: Largest shape the continued fraction takes on; beyond it lgamma differences lose digits.
_MAX_SHAPE = 5e4


def binom_cdf(k: float, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p) (= ``scipy.stats.binom.cdf``): I_{1-p}(n - k, k + 1)."""
    k = math.floor(k)
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return _betainc_or_scipy(n - k, k + 1.0, 1.0 - p, p)


def nbinom_cdf(k: float, r: float, p: float, q: float | None = None) -> float:
    """P(X <= k) for X ~ NegBinomial(r, p) failures before the r-th success (= ``scipy.stats.nbinom.cdf``):
    I_p(r, k + 1); ``q`` = 1 - p when the caller has it without cancellation."""
    k = math.floor(k)
    if k < 0:
        return 0.0
    return _betainc_or_scipy(r, k + 1.0, p, 1.0 - p if q is None else q)


def _betainc_or_scipy(a: float, b: float, x: float, y: float) -> float:
    if max(a, b) <= _MAX_SHAPE:
        return min(1.0, max(0.0, betainc(a, b, x, y)))
    from scipy import special  # heavy: only for shapes where the lgamma differences lose digits

    return float(special.betainc(a, b, x))


def lgamma_of_integers(v: NDArray[np.int64]) -> FloatArray:
    """``scipy.special.gammaln`` of positive integers: math.lgamma once per distinct value."""
    v = np.asarray(v, dtype=np.int64)
    if v.size == 0:
        return np.zeros(0)
    top = int(v.max())
    if v.min() < 1 or top > 16 * v.size + 1_000_000:
        distinct, inv = np.unique(v, return_inverse=True)
        return np.array([math.lgamma(float(d)) for d in distinct])[inv.reshape(v.shape)]
    seen = np.zeros(top + 1, dtype=bool)
    seen[v] = True
    table = np.zeros(top + 1)
    for d in np.flatnonzero(seen).tolist():
        table[d] = math.lgamma(d)
    return table[v]


def t_sf(x: float, df: float) -> float:
    """P(T >= x) for Student's t with ``df`` > 0 degrees of freedom (= ``scipy.stats.t.sf``)."""
    if math.isnan(x):
        return float("nan")
    if math.isinf(x):
        return 0.0 if x > 0 else 1.0
    half = 0.5 * min(1.0, max(0.0, betainc(0.5 * df, 0.5, df / (df + x * x), x * x / (df + x * x))))
    return half if x >= 0 else 1.0 - half


def t_ppf(q: float, df: float) -> float:
    """The ``q`` quantile of Student's t, 1/2 <= q < 1 (= ``scipy.stats.t.ppf``): the sf solved by
    bisection down to adjacent floats, closed forms for 1 and 2 degrees of freedom."""
    if df == 1.0:
        return math.tan(math.pi * (q - 0.5))
    if df == 2.0:
        return (2.0 * q - 1.0) / math.sqrt(2.0 * q * (1.0 - q))
    target = 1.0 - q
    lo, hi = 0.0, 1.0
    while t_sf(hi, df) > target:
        lo, hi = hi, 2.0 * hi
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            return hi if abs(t_sf(hi, df) - target) < abs(t_sf(lo, df) - target) else lo
        lo, hi = (mid, hi) if t_sf(mid, df) > target else (lo, mid)


def poisson_sf(k: int, lam: float) -> float:
    """P(X >= k) for X ~ Poisson(lam) (= ``scipy.stats.poisson.sf(k - 1, lam)``).

    Above the mean (k > lam) the tail is summed itself in log space, term j = k, k+1, ... (each
    term lam/(j+1) times the last, so the terms past ``k + 40 sqrt(lam) + 60`` add < 1e-300
    relative): 1 - cdf would lose every digit below ~1e-16 (it gave 6.7e-16 for 7.6e-43). At or
    below the mean the tail is >= ~0.3 and 1 - cdf keeps its digits.
    """
    if k <= 0:
        return 1.0
    if lam <= 0:
        return 0.0
    if k > lam:
        j = np.arange(k, k + int(40.0 * math.sqrt(lam) + 60.0), dtype=np.float64)
        steps = math.log(lam) - np.log(j[1:])
        log_tail = k * math.log(lam) - lam - math.lgamma(k + 1.0) + np.concatenate(([0.0], np.cumsum(steps)))
        return min(1.0, math.exp(float(np.logaddexp.reduce(log_tail))))
    log_terms = [j * math.log(lam) - lam - math.lgamma(j + 1) for j in range(k)]
    top = max(log_terms)
    cdf = math.exp(top) * sum(math.exp(t - top) for t in log_terms)
    return max(0.0, 1.0 - cdf)


def poisson_ppf(q: float, lam: float) -> int:
    """Smallest k with P(Poisson(lam) <= k) >= q (= ``scipy.stats.poisson.ppf`` for 0 < q < 1):
    the cumulative sum of the terms in log space."""
    if lam <= 0:
        return 0
    top = int(lam + 40.0 * math.sqrt(lam) + 60.0)
    k = np.arange(top + 1, dtype=np.float64)
    log_terms = -lam + k * math.log(lam) - np.concatenate(([0.0], np.cumsum(np.log(k[1:]))))
    log_cdf = np.logaddexp.accumulate(log_terms)
    hit = np.flatnonzero(log_cdf >= math.log(q))
    return int(hit[0]) if hit.size else top


def binom_sf(k: float, n: int, p: float) -> float:
    """P(X > k) for X ~ Binomial(n, p) (= ``scipy.stats.binom.sf``): I_p(k + 1, n - k)."""
    k = math.floor(k)
    if k < 0:
        return 1.0
    if k >= n:
        return 0.0
    if n > binomtail.LARGE_N and 0.0 < p < 1.0:  # a million trials: summed, without scipy's import
        return binomtail.binom_sf(int(k), int(n), p, 1.0 - p)
    return _betainc_or_scipy(k + 1.0, n - k, p, 1.0 - p)
