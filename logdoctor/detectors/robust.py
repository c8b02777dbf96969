"""The detectors' toolbox: one metric of a run as a Series, its noise, and the shared statistics of
logdoctor.stats under the names the detectors call them by (robust.rolling_median, robust.spearman, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from logdoctor.model import LINE_NO, STEP, Run
from logdoctor.stats.median import median as median
from logdoctor.stats.ranks import rank_average as rank_average
from logdoctor.stats.ranks import spearman as spearman
from logdoctor.stats.rolling import block_reduce as block_reduce
from logdoctor.stats.rolling import rolling_mad as rolling_mad
from logdoctor.stats.rolling import rolling_median as rolling_median
from logdoctor.stats.rolling import trailing_median as trailing_median
from logdoctor.stats.rolling import trend as trend
from logdoctor.stats.runs import runs_of as runs_of
from logdoctor.stats.runs import sustained as sustained
from logdoctor.stats.scale import MAD_TO_SIGMA as MAD_TO_SIGMA
from logdoctor.stats.scale import diff_noise
from logdoctor.stats.scale import robust_z as robust_z
from logdoctor.stats.scale import smooth_noise as smooth_noise
from logdoctor.structure import columns

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


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


def noise_sigma(x: FloatArray) -> float:
    """Robust per-point noise, insensitive to slow trends: MAD of first differences / sqrt(2).

    Taken once per read-only series (a metric's values, its log) and shared: spikes, change points
    and drops each read the loss's (structure/columns.py; the same function, the same number)."""
    return columns.derived(x, "noise_sigma", diff_noise)
