"""The period of a cyclic learning rate, so that a loss period equal to it is read as the lr's (LD506)."""

from __future__ import annotations

import numpy as np

#: The lr's top band: rows within this share of its range below its maximum are one peak.
TOP = 0.9
#: Peaks needed (two whole cycles) and how regular their spacing must be (MAD over median).
MIN_PEAKS = 3
MAX_IRREGULARITY = 0.2


def lr_period(steps: np.ndarray, lr: np.ndarray) -> float | None:
    """The median spacing in steps between the lr's peaks (runs of rows in its top band), when it
    peaks at least ``MIN_PEAKS`` times at regular spacing; None otherwise (a warm-up then a decay has
    one peak, a restart schedule with growing cycles is irregular)."""
    ok = np.isfinite(lr)
    s, v = steps[ok].astype(float), lr[ok]
    if v.size < 2 * MIN_PEAKS or np.ptp(v) <= 0:
        return None
    top = v >= v.min() + TOP * np.ptp(v)
    edges = np.flatnonzero(np.diff(np.r_[False, top, False].astype(int)))
    starts, ends = edges[::2], edges[1::2]
    if starts.size < MIN_PEAKS:
        return None
    centres = np.array([s[a:b].mean() for a, b in zip(starts, ends, strict=True)])
    gaps = np.diff(centres)
    period = float(np.median(gaps))
    if period <= 0 or float(np.median(np.abs(gaps - period))) > MAX_IRREGULARITY * period:
        return None
    return period
