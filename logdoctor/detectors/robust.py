"""Shared robust numeric helpers for the detectors: rolling median/MAD, noise scale, detrending."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from logdoctor.detectors import ndmedian
from logdoctor.detectors.tails import student_t_two_sided
from logdoctor.model import LINE_NO, STEP, Run
from logdoctor.structure import columns
from logdoctor.structure.median import median as median  # re-exported: the detectors' median

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Scale factor that turns a median absolute deviation into a Gaussian standard deviation.
MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True, slots=True)
class Series:
    """One metric of a run with its non-finite and null rows removed.

    Attributes:
        steps: training step of each kept row.
        values: the metric at those steps (finite).
        lines: 1-based log line of each kept row.
        log_scale: True when ``values`` are strictly positive (ratios are meaningful).
    """

    steps: IntArray
    values: FloatArray
    lines: IntArray
    log_scale: bool

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.values.size)

    def transformed(self) -> FloatArray:
        """``log(values)`` when strictly positive, otherwise the values themselves (read-only: the log
        is taken once per series and shared, as four detectors read it; structure/columns.py)."""
        return columns.derived(self.values, "log", np.log) if self.log_scale else self.values


def series(run: Run, column: str) -> Series:
    """Extract the finite rows of ``column`` (empty when the column is missing)."""
    t = run.table
    if column not in t.columns:
        empty_i = np.zeros(0, dtype=np.int64)
        return Series(empty_i, np.zeros(0), empty_i, False)
    # read once per table (structure/columns.py); a null is NaN there, dropped with the non-finite;
    # the arrays are shared by every caller and read-only (a caller that changes one copies it first)
    steps, vals, lines = columns.finite_rows(t, column, STEP, LINE_NO)
    return Series(steps, vals, lines, bool(vals.size and np.all(vals > 0)))


#: scipy.ndimage edge mode -> numpy.pad mode giving the same padded values.
_NUMPY_PAD = {"nearest": "edge", "mirror": "reflect", "reflect": "symmetric", "wrap": "wrap"}
#: Largest window view (points x window) that numpy's sliding median takes on when scipy's compiled
#: filter cannot be loaded alone (ndmedian.py; the usual path whenever it can, at any size).
_SMALL_VIEW = 1_000_000


def rolling_median(x: FloatArray, window: int, mode: str = "nearest") -> FloatArray:
    """Centred rolling median over ``window`` rows (made odd: ``window | 1``); O(n log w). The one
    rolling median of logdoctor: every stage calls it (or ``trailing_median``).

    Edges: ``mode`` as scipy.ndimage pads the series (``nearest``, ``mirror``, ``reflect``,
    ``wrap``; the window is then at most the series), or ``shrink``: the median of the points the
    window holds there. Inside, the same values by one of three paths: scipy's compiled 1-D filter
    loaded alone (ndmedian.py, the usual one), numpy's sliding median when points x window is small,
    else scipy.ndimage itself.
    """
    if mode == "shrink":
        return _shrinking(x, int(window) | 1)
    w = max(1, min(int(window), x.size))
    if w <= 1 or x.size == 0:
        return x.astype(np.float64, copy=True)
    size = w | 1
    compiled = ndmedian.median_filter(x, size, mode)  # scipy's own filter, without scipy.ndimage's import
    if compiled is not None:
        return compiled
    if mode in _NUMPY_PAD and x.size * size <= _SMALL_VIEW and np.isfinite(x).all():
        padded = np.pad(x.astype(np.float64, copy=False), size // 2, mode=_NUMPY_PAD[mode])  # type: ignore[call-overload]
        return np.asarray(np.median(np.lib.stride_tricks.sliding_window_view(padded, size), axis=1), dtype=np.float64)
    from scipy import ndimage  # long runs and wide windows: its import (~0.15 s) is paid once for much work

    return np.asarray(ndimage.median_filter(x, size=size, mode=mode), dtype=np.float64)


def _shrinking(x: FloatArray, size: int) -> FloatArray:
    """Centred median of the points each ``size``-row window (odd) holds: the whole window inside
    the series, fewer at its edges."""
    h, n = size // 2, x.size
    out = np.empty(n, dtype=np.float64)
    if n >= size:  # every window that fits whole: the padded filter's interior is exact there
        out[h : n - h] = rolling_median(x, size)[h : n - h]
    edges = range(n) if n < size else (*range(h), *range(n - h, n))
    for i in edges:
        out[i] = np.median(x[max(0, i - h) : i + h + 1])
    return out


def trailing_median(x: FloatArray, window: int) -> FloatArray:
    """Median of the last ``window`` rows up to each row (fewer at the start of the series)."""
    w, n = max(1, int(window)), x.size
    out = np.empty(n, dtype=np.float64)
    if n >= w and w % 2:  # the trailing window ending at i is the centred one at i - w // 2
        out[w - 1 :] = rolling_median(x, w)[w // 2 : n - w // 2]
    elif n >= w:
        out[w - 1 :] = np.median(np.lib.stride_tricks.sliding_window_view(x, w), axis=1)
    for i in range(min(w - 1, n)):
        out[i] = np.median(x[: i + 1])
    return out


def rolling_mad(x: FloatArray, center: FloatArray, window: int) -> FloatArray:
    """Centred rolling median absolute deviation of ``x`` around ``center``, scaled to a sigma."""
    return MAD_TO_SIGMA * rolling_median(np.abs(x - center), window)


def noise_sigma(x: FloatArray) -> float:
    """Robust per-point noise, insensitive to slow trends: MAD of first differences / sqrt(2).

    Taken once per read-only series (a metric's values, its log) and shared: spikes, change points
    and drops each read the loss's (structure/columns.py; the same function, the same number)."""
    return columns.derived(x, "noise_sigma", _noise_sigma)


def _noise_sigma(x: FloatArray) -> float:
    if x.size < 3:
        return 0.0
    d = np.diff(x)
    # both medians partition ``d`` in place: a median is blind to the order, and |d - m| is the
    # same set of numbers whatever order d is in (the zeros all +0.0), so no long copies
    m = median(d, overwrite=True)
    np.subtract(d, m, out=d)
    np.abs(d, out=d)
    return float(MAD_TO_SIGMA * median(d, overwrite=True) / np.sqrt(2.0))


def robust_z(x: FloatArray, center: FloatArray, scale: FloatArray | float) -> FloatArray:
    """(x - center) / scale with a zero scale replaced by the smallest positive one."""
    s = np.broadcast_to(np.asarray(scale, dtype=np.float64), x.shape).copy()
    pos = s[s > 0]
    floor = float(pos.min()) if pos.size else 1.0
    s[s <= 0] = floor
    return (x - center) / s


def block_reduce(x: FloatArray, max_blocks: int, how: str = "median") -> tuple[FloatArray, int]:
    """Aggregate ``x`` into at most ``max_blocks`` equal blocks (the last may be short).

    Returns:
        (block values, block size in rows).
    """
    size = max(1, -(-x.size // max(1, max_blocks)))
    full = (x.size // size) * size
    body = x[:full].reshape(-1, size)
    fn = np.median if how == "median" else np.mean
    out = fn(body, axis=1) if full else np.zeros(0)
    if full < x.size:
        out = np.append(out, fn(x[full:]))
    return np.asarray(out, dtype=np.float64), size


def trend(x: FloatArray, window: int, max_blocks: int = 4000) -> FloatArray:
    """Slow component of ``x``: a centred rolling median of ``window`` rows, computed on block
    medians (so a window of 300,000 rows costs the same as one of 300) and interpolated back.
    """
    if x.size == 0:
        return x.copy()
    blocks, size = block_reduce(x, max_blocks)
    smooth = rolling_median(blocks, max(1, window // size))
    if size == 1:
        return smooth
    centers = np.arange(blocks.size) * size + (size - 1) / 2.0
    centers[-1] = (blocks.size - 1) * size + (x.size - (blocks.size - 1) * size - 1) / 2.0
    return np.interp(np.arange(x.size, dtype=np.float64), centers, smooth)


def spearman(a: FloatArray, b: FloatArray) -> tuple[float, float]:
    """Spearman rank correlation and its two-sided p-value ((0, 1) on fewer than 4 points)."""
    if a.size < 4 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0, 1.0
    # = scipy.stats.spearmanr(a, b) (same rho, same t-test p-value), with numpy's SIMD sort in
    # place of scipy's merge-sort ranking: ~4x faster at 1M points
    rho = np.corrcoef(rank_average(a), rank_average(b))[0, 1]
    dof = a.size - 2
    with np.errstate(divide="ignore"):
        t = rho * np.sqrt(np.clip(dof / ((rho + 1.0) * (1.0 - rho)), 0.0, None))
    return float(rho), student_t_two_sided(float(t), dof)


def rank_average(x: FloatArray) -> FloatArray:
    """Ranks from 1 with ties given their average rank: ``scipy.stats.rankdata(x)`` for finite x."""
    order = np.argsort(x)
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    counts = np.diff(np.r_[starts, x.size])
    ranks = np.empty(x.size, dtype=np.float64)
    ranks[order] = np.repeat(starts + (counts + 1) / 2.0, counts)
    return ranks


def runs_of(mask: NDArray[np.bool_]) -> tuple[IntArray, IntArray]:
    """Start and end (exclusive) indices of each run of True in ``mask``."""
    if mask.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z
    edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    return np.flatnonzero(edges == 1).astype(np.int64), np.flatnonzero(edges == -1).astype(np.int64)


def sustained(mask: NDArray[np.bool_], min_len: int) -> NDArray[np.bool_]:
    """Keep only the runs of True in ``mask`` that last at least ``min_len`` rows."""
    starts, ends = runs_of(mask)
    keep = (ends - starts) >= min_len
    marks = np.zeros(mask.size + 1, dtype=np.int64)
    np.add.at(marks, starts[keep], 1)
    np.add.at(marks, ends[keep], -1)
    return np.cumsum(marks[:-1]) > 0


def smooth_noise(sm: FloatArray, w: int, sigma: float) -> float:
    """How much the smoothed curve itself wanders: robust spread of differences between window
    medians ``w`` rows apart (independent windows), floored at ``sigma / sqrt(w)``."""
    floor = sigma / np.sqrt(w)
    if sm.size <= w + 2:
        return floor
    d = sm[w:] - sm[:-w]
    return max(floor, MAD_TO_SIGMA * float(median(np.abs(d - median(d)))) / np.sqrt(2.0))
