"""Per-batch length statistics: the batch-length series, its order along the steps, loss link."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from logdoctor.model import LEN_MAX, LEN_MEAN, SEQS, STEP, TOKENS, Run
from logdoctor.stats.ranks import rank_average, spearman
from logdoctor.structure import columns


def column(run: Run, name: str) -> np.ndarray | None:
    """A column as float numpy (nulls -> NaN), or None when the run lacks it."""
    if not run.has(name):
        return None
    return columns.floats(run.table, name).copy()  # read once per table; the copy is the caller's


def batch_length(run: Run) -> tuple[np.ndarray | None, str]:
    """The per-step batch length series and what it was built from.

    ``len_mean`` when logged, else ``tokens / seqs``, else ``len_max``; None when the log has none.
    """
    lm = column(run, LEN_MEAN)
    if lm is not None:
        return lm, LEN_MEAN
    tok, seqs = column(run, TOKENS), column(run, SEQS)
    if tok is not None and seqs is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            return tok / seqs, "tokens/seqs"
    mx = column(run, LEN_MAX)
    return (mx, LEN_MAX) if mx is not None else (None, "")


def relative_spread(x: np.ndarray) -> float:
    """Inter-quartile range over the median of the finite values (0 for a constant series)."""
    f = x[np.isfinite(x)]
    if f.size < 2:
        return 0.0
    # the quantiles of the sorted values are the quantiles of the values (the same numbers): numpy's
    # SIMD sort and a partition of sorted data take half the time of a partition of batch counts
    # (a few thousand distinct values over a million steps)
    q1, med, q3 = np.quantile(np.sort(f), [0.25, 0.5, 0.75], overwrite_input=True)
    return float((q3 - q1) / abs(med)) if med else 0.0


def lag1_rank_corr(x: np.ndarray) -> float:
    """Spearman correlation of consecutive finite values (lag-1 rank autocorrelation)."""
    f = x[np.isfinite(x)]
    if f.size < 4 or np.ptp(f) == 0:
        return 0.0
    r = rank_average(f)
    return float(np.corrcoef(r[:-1], r[1:])[0, 1])


@dataclass(frozen=True, slots=True)
class OrderStats:
    """How batch length moves along the steps.

    Attributes:
        n: finite batch lengths used.
        lag1: lag-1 rank autocorrelation of batch length (≈0 when batches are shuffled).
        lag1_len_max: the same for ``len_max`` (None when not logged).
        z: ``lag1 * sqrt(n)``, the standard-normal score of lag1 under a random order.
        monotone_frac: share of step-to-step changes that go in the dominant direction.
        direction: "ascending" or "descending" (the dominant direction).
        resets: steps where length jumps against the dominant direction by over half its range.
        reset_spacing: median steps between resets (None with fewer than two).
    """

    n: int
    lag1: float
    lag1_len_max: float | None
    z: float
    monotone_frac: float
    direction: str
    resets: tuple[int, ...]
    reset_spacing: float | None


def order_stats(steps: np.ndarray, x: np.ndarray, len_max: np.ndarray | None) -> OrderStats:
    """Order statistics of the batch-length series ``x`` over ``steps``."""
    ok = np.isfinite(x)
    s, v = steps[ok], x[ok]
    d = np.diff(v)
    nz = d[d != 0]
    up = float(np.mean(nz > 0)) if nz.size else 0.5
    ascending = up >= 0.5
    lag1 = lag1_rank_corr(v)
    lo, hi = np.quantile(v, [0.05, 0.95]) if v.size else (0.0, 0.0)
    against = -d if ascending else d
    reset_idx = np.flatnonzero(against > 0.5 * (hi - lo)) + 1 if hi > lo else np.array([], int)
    at = s[reset_idx].astype(np.int64)  # a shuffled run has ~n/7 "resets": no Python loop
    resets = tuple(at.tolist())
    spacing = float(np.median(np.diff(at))) if len(resets) >= 2 else None
    return OrderStats(
        n=int(v.size),
        lag1=lag1,
        lag1_len_max=None if len_max is None else lag1_rank_corr(len_max),
        z=lag1 * float(np.sqrt(max(v.size, 1))),
        monotone_frac=max(up, 1 - up),
        direction="ascending" if ascending else "descending",
        resets=resets,
        reset_spacing=spacing,
    )


def detrend(steps: np.ndarray, loss: np.ndarray, degree: int = 3) -> np.ndarray:
    """Loss minus a smooth training-progress trend (cubic in log step, robust to spikes).

    Non-finite losses stay NaN. The cubic cannot follow an epoch-periodic pattern over several
    epochs, so sawtooths and length effects stay in the residual.
    """
    out = np.full(loss.shape, np.nan)
    ok = np.isfinite(loss)
    if ok.sum() <= degree + 2:
        return out
    kept = steps[ok]
    u = np.log1p(kept - kept.min())
    u = 2 * (u - u.min()) / max(np.ptp(u), 1e-12) - 1
    basis = _vander(u, degree + 1)
    y = loss[ok]
    # the first fit weighs every row 1 (the basis and y as they are); the second drops outliers
    coef, *_ = np.linalg.lstsq(basis, y, rcond=None)
    r = y - basis @ coef
    mad = np.median(np.abs(r - np.median(r))) * 1.4826 or 1e-12
    w = (np.abs(r) < 5 * mad).astype(float)
    coef, *_ = np.linalg.lstsq(basis * w[:, None], y * w, rcond=None)
    out[ok] = y - basis @ coef
    return out


def _vander(u: np.ndarray, columns: int) -> np.ndarray:
    """``np.vander(u, columns)`` (decreasing powers) with the same numbers: numpy's builds each row
    by a ``multiply.accumulate`` of ``columns - 1`` values, ~10x slower at a million rows than these
    column products, which multiply in the same order (``u**3`` is ``(u * u) * u``)."""
    out = np.empty((u.size, columns))
    out[:, -1] = 1.0
    if columns > 1:
        out[:, -2] = u
    for k in range(columns - 3, -1, -1):
        np.multiply(out[:, k + 1], u, out=out[:, k])
    return out


def length_z(x: np.ndarray) -> np.ndarray:
    """Standardised log batch length (NaN where the length is missing)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lx = np.log(np.where(x > 0, x, np.nan))
    return (lx - np.nanmean(lx)) / (np.nanstd(lx) or 1.0)


def remove_length(resid: np.ndarray, x: np.ndarray | None) -> np.ndarray:
    """The residual with its linear dependence on log batch length removed (for spike tests)."""
    if x is None:
        return resid
    z = length_z(x)
    ok = np.isfinite(resid) & np.isfinite(z)
    if ok.sum() < 10:
        return resid
    beta = float(np.polyfit(z[ok], resid[ok], 1)[0])
    return resid - beta * np.where(np.isfinite(z), z, 0.0)


@dataclass(frozen=True, slots=True)
class LossLength:
    """Spearman correlation of the detrended loss with batch length, with p-value and 95% CI."""

    rho: float
    p_value: float
    ci_low: float
    ci_high: float
    n: int


#: "the loss tracks batch length": Spearman p below this and |ρ| at least TRACK_RHO. Null: under a
#: shuffled order with no length effect ρ ~ N(0, 1/n); p < 1e-3 keeps the false-alarm rate at 0.1%
#: per run, and |ρ| ≥ 0.1 (1% of the loss variance) keeps huge runs from flagging a negligible effect.
TRACK_P, TRACK_RHO = 1e-3, 0.1


def tracks(c: LossLength | None) -> bool:
    """The loss follows batch length (the one definition every rule uses)."""
    return c is not None and c.p_value < TRACK_P and abs(c.rho) >= TRACK_RHO


def loss_length(resid: np.ndarray, x: np.ndarray) -> LossLength | None:
    """How the detrended loss tracks batch length; None with fewer than 10 usable steps."""
    ok = np.isfinite(resid) & np.isfinite(x)
    n = int(ok.sum())
    if n < 10 or np.ptp(x[ok]) == 0 or np.ptp(resid[ok]) == 0:
        return None
    rho, p_value = spearman(resid[ok], x[ok])
    half = 1.96 / np.sqrt(max(n - 3, 1))
    zr = np.arctanh(np.clip(rho, -0.999999, 0.999999))
    return LossLength(rho, p_value, float(np.tanh(zr - half)), float(np.tanh(zr + half)), n)


def step_array(run: Run) -> np.ndarray:
    """The step column as int64 numpy."""
    return run.table[STEP].to_numpy()
