"""Robust scales: MAD to sigma, the noise of a series from its differences, robust z-scores."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from logdoctor.stats.median import median

FloatArray = NDArray[np.float64]

#: Scale factor that turns a median absolute deviation into a Gaussian standard deviation.
MAD_TO_SIGMA = 1.4826


def diff_noise(x: FloatArray) -> float:
    """Robust per-point noise, insensitive to slow trends: MAD of first differences / sqrt(2)."""
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


def smooth_noise(sm: FloatArray, w: int, sigma: float) -> float:
    """How much the smoothed curve itself wanders: robust spread of differences between window
    medians ``w`` rows apart (independent windows), floored at ``sigma / sqrt(w)``."""
    floor = sigma / np.sqrt(w)
    if sm.size <= w + 2:
        return floor
    d = sm[w:] - sm[:-w]
    return max(floor, MAD_TO_SIGMA * float(median(np.abs(d - median(d)))) / np.sqrt(2.0))
