"""A loss that jumps several times its starting value in a run too short for the spike and divergence statistics.

The spike detector needs 8 rows (a local median and a noise scale) and divergence a smoothing
window; a run of 3-7 rows (epoch-level results, a job killed after a few log intervals) would be
skipped though a blow-up is plain in it. Here the statistic is the largest rise of a row above the
lowest loss before it, over the run's first loss: a loss that climbs by several times what it
started at has blown up, whatever the noise of so few rows.

Null (bench/short_jump_null.py): the healthy dev blind logs, the healthy public logs and the
../shared/reallogs logs answered ok in tests/answers.tsv (74 logs, 112 runs with a positive loss);
every run's first 3-7 rows, read at row strides 1, 2, 5, 10, 20, 50 and 100 (a short log is a run's
start, logged at any interval). The largest rise is 0.65 times the first loss (an SFT run whose
loss climbs 1.6 -> 2.9 over its first warm-up rows); the next 0.43. ``MIN_RISE`` = 2 is three times
that: the loss climbs to three times its start or more above its lowest point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from logdoctor.detectors.robust import Series

#: Fewest rows: a start, a lowest point before the jump, the jump.
MIN_ROWS = 3
#: A jump is a rise above the lowest earlier loss of at least this many times the first loss.
MIN_RISE = 2.0


@dataclass(frozen=True, slots=True)
class Jump:
    """The highest row's jump in a short loss series (rows index the Series).

    Attributes:
        row: the highest row above its earlier minimum. low_row: that minimum's row.
        rise: (value - minimum) / first value. held: the last row is still ``MIN_RISE`` above the minimum.
    """

    row: int
    low_row: int
    rise: float
    held: bool


def short_jump(s: Series, min_rise: float = MIN_RISE) -> Jump | None:
    """The jump of a positive loss series of ``MIN_ROWS`` rows or more, None when no row rises
    ``min_rise`` times the first loss above the lowest loss before it."""
    v = s.values
    if v.size < MIN_ROWS or not s.log_scale:  # a loss that crosses 0 has no scale to rise by
        return None
    low = np.minimum.accumulate(v)[:-1]
    rise = (v[1:] - low) / v[0]
    i = int(np.argmax(rise))
    if rise[i] < min_rise:
        return None
    row = i + 1
    low_row = int(np.flatnonzero(v[:row] == low[i])[0])
    held = bool((v[-1] - low[-1]) / v[0] >= min_rise) if row < v.size - 1 else True
    return Jump(row, low_row, float(rise[i]), held)
