"""Seconds per step of a run, from a step-duration column, a throughput column or cumulative time.

Reusable (the slowdown detector; throughput ratios between runs): the values are proportional to
the time one step takes, in the units of the source column (a ratio between two stretches, or two
runs with the same column, is unit-free).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from logdoctor.detectors import robust
from logdoctor.detectors.robust import FloatArray, IntArray
from logdoctor.model import THROUGHPUT, Run

#: Columns holding the duration of a step (or the mean duration over the logging interval).
DURATION_COLUMNS: tuple[str, ...] = (
    "step_time",
    "dt",
    "ms_iter",
    "ms_batch",
    "ms_per_step",
    "elapsed_time_per_iteration_ms",
    "iter_time",
    "time_per_step",
    "sec_per_step",
    "s_per_step",
    "train_speed_s_it",
    "batch_time",
    "time_per_iter",
)
#: Columns holding a rate (tokens, samples or steps per second): a step takes 1 / rate.
RATE_COLUMNS: tuple[str, ...] = (
    THROUGHPUT,
    "samples_per_second",
    "train_samples_per_second",
    "samples_per_sec",
    "updates_sec",
    "ups",
    "throughput_device_batches_per_second",
    "tokens_global_per_sec",
    "steps_per_second",
)
#: Columns holding the time elapsed since the start: a step takes the difference over the steps.
ELAPSED_COLUMNS: tuple[str, ...] = (
    "elapsed",
    "elapsed_time",
    "train_time",
    "time_elapsed",
    "timestamp",
    "wall",
    "runtime",
    "time",
    "wall_time",
)
#: Fewer rows than this: no step-time series.
MIN_ROWS = 20


@dataclass(frozen=True, slots=True)
class StepTimes:
    """Time per step (relative units) at each row that has it.

    Attributes:
        steps: training step of each row. seconds: time per step, proportional to seconds.
        source: the column it came from. kind: "duration", "rate" or "elapsed".
    """

    steps: IntArray
    seconds: FloatArray
    source: str
    kind: str

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.seconds.size)


def _positive(steps: IntArray, values: FloatArray) -> tuple[IntArray, FloatArray]:
    keep = np.isfinite(values) & (values > 0)
    return steps[keep], values[keep]


def _from_elapsed(run: Run, column: str) -> StepTimes | None:
    s = robust.series(run, column)
    if s.n < MIN_ROWS + 1 or np.any(np.diff(s.values) < 0):
        return None  # not cumulative (or restarted): not a clock
    dt, ds = np.diff(s.values), np.diff(s.steps).astype(np.float64)
    steps, sec = _positive(s.steps[1:], dt / np.where(ds > 0, ds, np.nan))
    return StepTimes(steps, sec, column, "elapsed") if sec.size >= MIN_ROWS else None


def step_times(run: Run) -> StepTimes | None:
    """The first usable source among duration, rate and elapsed-time columns; None when none is."""
    for column in DURATION_COLUMNS + RATE_COLUMNS:
        s = robust.series(run, column)
        steps, vals = _positive(s.steps, s.values)
        if vals.size >= MIN_ROWS and np.ptp(vals) > 0:
            if column in DURATION_COLUMNS:
                return StepTimes(steps, vals, column, "duration")
            return StepTimes(steps, 1.0 / vals, column, "rate")
    for column in ELAPSED_COLUMNS:
        found = _from_elapsed(run, column)
        if found is not None:
            return found
    return None


def median_ratio(a: StepTimes, b: StepTimes) -> float | None:
    """Median time per step of ``b`` over that of ``a`` (same source column only), e.g. for comparing runs."""
    if a.source != b.source or a.n == 0 or b.n == 0:
        return None
    return float(np.median(b.seconds) / np.median(a.seconds))
