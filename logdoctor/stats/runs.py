"""Runs of True in a boolean mask: where they start and end, and the ones that last."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]


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
