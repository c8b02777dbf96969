"""Spike events of one series: points far above their local level (robust z and ratio), grouped into events."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from logdoctor.detectors import robust
from logdoctor.detectors.robust import FloatArray, IntArray, Series


@dataclass(frozen=True, slots=True)
class Spikes:
    """Spike events of one series (arrays indexed by event; rows index the Series).

    Attributes:
        start / end / peak: first row, last row (inclusive) and highest row of each event.
        z: robust z-score at the peak. ratio: peak value / local median.
        level: local median at the peak. value: the value at the peak.
    """

    start: IntArray
    end: IntArray
    peak: IntArray
    z: FloatArray
    ratio: FloatArray
    level: FloatArray
    value: FloatArray


def upward_z(s: Series, window: int, scale_window: int) -> tuple[FloatArray, FloatArray]:
    """One-sided robust z of each row above its local level, and that level (original units).

    The level is a centred rolling median over ``window`` rows (spikes narrower than half the
    window cannot pull it up); the scale is a rolling MAD of the residuals over ``scale_window``
    rows, floored at half the run's difference-based noise so flat stretches do not explode z.
    """
    y = s.transformed()
    med = robust.rolling_median(y, window)
    resid = y - med
    scale = robust.rolling_mad(resid, np.zeros_like(resid), scale_window)
    floor = 0.5 * robust.noise_sigma(y)
    scale = np.maximum(scale, floor) if floor > 0 else scale
    level = np.exp(med) if s.log_scale else med
    return robust.robust_z(y, med, scale), level


def find_spikes(s: Series, *, z_threshold: float, min_ratio: float, window: int, scale_window: int) -> Spikes:
    """Group rows far above their local level into events (consecutive rows form one event)."""
    z, level = upward_z(s, window, scale_window)
    safe = np.where(np.abs(level) > 0, np.abs(level), 1.0)
    # zero or negative losses: 1 + excess over |level| (a level of 0 gives ratio inf)
    linear = np.where(np.abs(level) > 0, 1.0 + (s.values - level) / safe, np.inf)
    ratio = s.values / safe if s.log_scale else linear
    mask = (z >= z_threshold) & (ratio >= min_ratio)
    starts, ends = robust.runs_of(mask)
    if starts.size == 0:
        e = np.zeros(0, dtype=np.int64)
        f = np.zeros(0)
        return Spikes(e, e, e, f, f, f, f)
    seg = np.repeat(np.arange(starts.size), ends - starts)
    rows = np.flatnonzero(mask)
    order = np.lexsort((-z[rows], seg))
    first = np.concatenate(([True], seg[order][1:] != seg[order][:-1]))
    peak = rows[order][first]
    return Spikes(starts, ends - 1, peak, z[peak], ratio[peak], level[peak], s.values[peak])
