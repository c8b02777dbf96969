"""Rolling medians (centred, shrinking at the edges, trailing), a rolling MAD and a block-median trend."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from logdoctor.stats import ndmedian
from logdoctor.stats.scale import MAD_TO_SIGMA

FloatArray = NDArray[np.float64]

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
    if compiled is None and size > x.size and mode in _NUMPY_PAD:
        compiled = _padded(x, size, mode)
    if compiled is not None:
        return compiled
    if mode in _NUMPY_PAD and x.size * size <= _SMALL_VIEW and np.isfinite(x).all():
        padded = np.pad(x.astype(np.float64, copy=False), size // 2, mode=_NUMPY_PAD[mode])  # type: ignore[call-overload]
        return np.asarray(np.median(np.lib.stride_tricks.sliding_window_view(padded, size), axis=1), dtype=np.float64)
    from scipy import ndimage  # long runs and wide windows: its import (~0.15 s) is paid once for much work

    return np.asarray(ndimage.median_filter(x, size=size, mode=mode), dtype=np.float64)


def _padded(x: FloatArray, size: int, mode: str) -> FloatArray | None:
    """The compiled filter's values for a window one row longer than an even series (a trend over
    the whole run): the series padded as ``mode`` pads it, filtered, its own rows kept. The same
    values as scipy.ndimage's (which the compiled filter leaves to it), without importing it
    (~0.35 s in every process and --jobs worker)."""
    h = size // 2
    wide = ndmedian.median_filter(np.pad(x.astype(np.float64, copy=False), h, mode=_NUMPY_PAD[mode]), size, mode)  # type: ignore[call-overload]
    return None if wide is None else wide[h : h + x.size]


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
