"""Steps of rows that print none, from the tqdm bar drawn between them (HF console dicts under
the Trainer's progress bar, as a wandb ``output.log`` keeps it)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import polars as pl

from logdoctor.model import LINE_NO

#: At least this many rows must each follow a bar drawing of their own.
MIN_ROWS = 3


class BarSteps(NamedTuple):
    """What the bar says of the rows: the steps between two rows and the bar's total."""

    stride: int
    total: int


def bar_steps(table: pl.DataFrame, bars: tuple[tuple[int, int, int], ...]) -> BarSteps | None:
    """The stride and planned total of rows numbered by order, from the bar drawn before each.

    Each row takes the last bar drawing above it, when that drawing lies after the row before (the bar
    moved between them); among those of the most common total, the median increase of the count from
    one row to the next is the stride. None when fewer than ``MIN_ROWS`` rows have a drawing of their
    own or the count never increases (a bar of another loop: evaluation, data loading).
    """
    if not bars or LINE_NO not in table.columns or table.height < MIN_ROWS:
        return None
    lines = np.sort(table[LINE_NO].drop_nulls().to_numpy())
    bar = np.asarray(bars, dtype=np.int64)
    at = np.searchsorted(bar[:, 0], lines) - 1  # the last drawing above each row
    prev = np.concatenate(([-1], lines[:-1]))
    own = (at >= 0) & (bar[np.maximum(at, 0), 0] > prev)
    if own.sum() < MIN_ROWS:
        return None
    drawn = bar[at[own]]
    totals, counts = np.unique(drawn[:, 2], return_counts=True)
    total = int(totals[np.argmax(counts)])
    seen = drawn[drawn[:, 2] == total, 1]
    steps = np.diff(seen)
    steps = steps[steps > 0]
    if steps.size < MIN_ROWS - 1:
        return None
    return BarSteps(int(np.median(steps)), total)
