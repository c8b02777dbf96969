"""The loss spike that comes before a non-finite loss: the blow-up began while the loss was still a number.

A loss that turns NaN/inf is LD001's; the rows just before it often show the blow-up starting (a
loss part climbing above anything it had been). In a run of a few rows, or with the spike one row
before the NaN, the rolling statistics cannot see it. Here: in the ``WINDOW`` rows before the first
non-finite loss (and that row itself, for a part still finite there), the loss or one of its parts
reaches ``MIN_RATIO`` times the highest value it had taken in all its earlier rows (at least
``MIN_EARLIER`` of them), and the row before it was no new high (a loss climbing row after row to
the NaN is divergence, LD002's).

Null (the healthy logs of bench/short_jump_null.py: the loss and every loss part, from row 3 on,
at row strides 1 and 10): 4 of 270,307 rows reach 1.25 times their column's highest earlier value
(1.5e-5 per row; all at rows 4-5 of a DETR class loss, and one 1.25x LLM fine-tune row). The rule
tests a few rows of a run that went non-finite, so noise alone names a precursor in about 1e-4 of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from logdoctor.detectors.nonfinite import other_objectives
from logdoctor.model import LINE_NO, LOSS, STEP, Run

#: A precursor reaches this many times the highest value its column had taken before.
MIN_RATIO = 1.25
#: Rows before the first non-finite loss that are read.
WINDOW = 2
#: Earlier finite rows a column needs for "the highest it had been".
MIN_EARLIER = 3


@dataclass(frozen=True, slots=True)
class Precursor:
    """A row before the first non-finite loss where ``column`` rose above all its earlier values."""

    column: str
    step: int
    line: int
    value: float
    highest_before: float
    nonfinite_step: int

    @property
    def ratio(self) -> float:
        """The value over the highest earlier value."""
        return self.value / self.highest_before


def _floats(run: Run, col: str) -> np.ndarray:
    return run.table[col].cast(pl.Float64, strict=False).fill_null(np.nan).to_numpy().astype(float)


def nan_precursor(run: Run) -> Precursor | None:
    """The earliest precursor row (the largest ratio among columns at that row), None when the loss
    never goes non-finite or no column rose ``MIN_RATIO`` above its past before it did."""
    if LOSS not in run.table.columns or run.table.height == 0:
        return None
    col = run.table[LOSS].cast(pl.Float64, strict=False)
    bad = np.flatnonzero((col.is_nan() | col.is_infinite()).fill_null(False).to_numpy())
    if bad.size == 0:
        return None
    k = int(bad[0])
    steps = run.table[STEP].to_numpy()
    lines = run.table[LINE_NO].to_numpy() if LINE_NO in run.table.columns else np.zeros(steps.size, dtype=int)
    found: list[tuple[int, float, Precursor]] = []
    for c in [LOSS, *other_objectives(run)]:
        v = _floats(run, c)
        for j in range(max(MIN_EARLIER, k - WINDOW), min(k, v.size - 1) + 1):
            past = v[:j][np.isfinite(v[:j])]
            if not np.isfinite(v[j]) or past.size < MIN_EARLIER or not (np.all(past > 0) and v[j] > 0):
                continue
            top = float(past.max())
            # sudden: the row before was no new high (a loss climbing row after row is divergence, LD002's)
            if v[j] >= MIN_RATIO * top and not v[j - 1] > float(np.nanmax(v[: j - 1])):
                found.append(
                    (j, -float(v[j]) / top, Precursor(c, int(steps[j]), int(lines[j]), float(v[j]), top, int(steps[k])))
                )
                break
    if not found:
        return None
    return min(found, key=lambda t: (t[0], t[1]))[2]
