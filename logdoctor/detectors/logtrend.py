"""LD201's trend: a natural cubic spline with knots equally spaced in log-steps, fitted robustly.

A loss falls fast early and slowly late; a batching sawtooth repeats with the epoch. Knots equally
spaced in log(1 + t / (LOG_OFFSET x span)) follow the fast early fall, while late in the run they
are too far apart to follow a cycle: with 8 degrees of freedom the last two knot intervals cover
the run's second half and the quarter before it, so a sawtooth of 4 or more epochs survives the
detrend there. The default rolling median follows any near-monotone curve row by row, a sawtooth
riding on a steep fall included, and its padded ends leave the lowest bins of white noise 15-60x
above the rest (bench/ld201_lowfreq.py, bench/RESULTS.md). Used when LD201's ``trend_dof`` > 0 (not
yet the default: RESULTS.md says why). The fit is Huber IRLS (a loss spike does not bend it) on at
most MAX_BLOCKS block medians, evaluated at every row.
"""

from __future__ import annotations

import numpy as np

from logdoctor.detectors.robust import MAD_TO_SIGMA, FloatArray, block_reduce

#: The log warp's offset as a share of the logged span: t / (0.01 span) puts the second knot (of 8
#: degrees of freedom) at ~1% of the run and the last interior one at ~53%.
LOG_OFFSET = 0.01
#: Longer series are fitted on the medians of this many equal blocks (the basis is then evaluated
#: at every row): the fit's cost stays flat with the run's length.
MAX_BLOCKS = 4000
#: Huber's tuning constant (95% efficiency on Gaussian noise) and the number of reweighting steps.
HUBER_K = 1.345
IRLS_STEPS = 8


def warp(steps: FloatArray) -> FloatArray:
    """Steps as log(1 + t / (LOG_OFFSET x span)), t counted from the first, scaled to [0, 1]."""
    t = steps - steps[0]
    span = float(t[-1]) if t.size else 0.0
    if span <= 0:
        return np.zeros(t.size)
    u = np.log1p(t / max(LOG_OFFSET * span, 1e-12))
    return np.asarray(u / u[-1], dtype=np.float64)


def basis(u: FloatArray, dof: int) -> FloatArray:
    """Natural cubic spline basis in ``u`` (0..1) with ``dof`` columns, intercept included, knots at
    ``dof`` equally spaced points of [0, 1] (truncated-power form: cubic between the knots, linear
    beyond the last; ``u`` never passes 1, so the last knot's own cubic term is zero)."""
    if dof <= 2:
        return np.vander(u, max(1, dof), increasing=True)
    knots = np.linspace(0.0, 1.0, dof)
    out = np.empty((u.size, dof))
    out[:, 0], out[:, 1] = 1.0, u
    cubes = []
    for k in knots[:-1]:
        w = np.maximum(u - k, 0.0)
        w *= w * w
        w /= 1.0 - k
        cubes.append(w)
    for j in range(dof - 2):
        np.subtract(cubes[j], cubes[-1], out=out[:, j + 2])
    return out


def evaluate(u: FloatArray, beta: FloatArray) -> FloatArray:
    """``basis(u, beta.size) @ beta`` without building the basis (~3x faster on a million rows):
    each knot's cube is added where ``u`` (ascending) has passed the knot."""
    if beta.size <= 2:
        return np.asarray(np.polynomial.polynomial.polyval(u, beta), dtype=np.float64)
    knots = np.linspace(0.0, 1.0, beta.size)
    out = beta[0] + beta[1] * u
    coef = np.append(beta[2:], -beta[2:].sum())  # the last knot's cube enters every column but its own
    for k, c in zip(knots[:-1], coef, strict=True):
        i = int(np.searchsorted(u, k, side="right"))
        w = u[i:] - k
        out[i:] += (c / (1.0 - k)) * (w * w * w)
    return np.asarray(out, dtype=np.float64)


def _solve(x: FloatArray, y: FloatArray, w: FloatArray) -> FloatArray:
    """Weighted least squares by the normal equations (a few columns: ~50x faster than lstsq here)."""
    xw = x * w[:, None]
    try:
        return np.asarray(np.linalg.solve(xw.T @ x, xw.T @ y), dtype=np.float64)
    except np.linalg.LinAlgError:  # too few distinct steps for the columns
        sw = np.sqrt(w)
        return np.asarray(np.linalg.lstsq(x * sw[:, None], y * sw, rcond=None)[0], dtype=np.float64)


def huber_fit(y: FloatArray, x: FloatArray) -> FloatArray:
    """Coefficients of ``y ~ x`` by iteratively reweighted least squares with Huber's weights
    (scale: MAD of the residuals; an exact fit stops the iteration)."""
    beta = _solve(x, y, np.ones(y.size))
    for _ in range(IRLS_STEPS):
        r = y - x @ beta
        sigma = MAD_TO_SIGMA * float(np.median(np.abs(r - np.median(r))))
        if not sigma > 0:
            break
        beta = _solve(x, y, np.minimum(1.0, HUBER_K * sigma / np.maximum(np.abs(r), 1e-300)))
    return beta


def trend(steps: FloatArray, y: FloatArray, dof: int = 8) -> FloatArray:
    """The fitted trend of ``y`` at each of ``steps`` (ascending): a natural cubic spline of ``dof``
    degrees of freedom in warped steps (``warp``), fitted by ``huber_fit`` on block medians."""
    if y.size == 0:
        return y.astype(np.float64, copy=True)
    u = warp(steps.astype(np.float64, copy=False))
    dof = max(1, min(dof, y.size // 4))
    if y.size > MAX_BLOCKS:
        yb, _ = block_reduce(y, MAX_BLOCKS)
        ub, _ = block_reduce(u, MAX_BLOCKS, how="mean")
        return evaluate(u, huber_fit(yb, basis(ub, dof)))
    return evaluate(u, huber_fit(y, basis(u, dof)))
