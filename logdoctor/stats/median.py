"""``np.median`` of a 1-D float64 array without numpy's generic set-up, shared by structure and the detectors."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def median(x: NDArray[np.float64], overwrite: bool = False) -> np.float64:
    """``np.median(x)`` of a 1-D float64 array, the same number without its ~40 us of generic
    set-up (a small log's analysis takes thousands of medians): the same partition, the same
    sum and division of the middle pair, NaN when ``x`` holds one. Anything else goes to numpy.
    ``overwrite``: partition ``x`` itself (its order changes; no copy of a long array)."""
    n = x.size
    if n == 0 or x.ndim != 1 or x.dtype != np.float64:
        return np.median(x, overwrite_input=overwrite)
    h = n // 2
    kth = [h, -1] if n % 2 else [h - 1, h, -1]
    if overwrite:
        x.partition(kth)
        part = x
    else:
        part = np.partition(x, kth)
    # numpy's mean of the middle one (a sum from 0: a zero is +0.0) or two (summed as it sums them)
    mid = 0.0 + part[h] if n % 2 else (part[h - 1] + (0.0 + part[h])) / 2
    return part[-1] if np.isnan(part[-1]) else mid
