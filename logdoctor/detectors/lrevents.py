"""Learning-rate changes of a run: discontinuities (jumps and drops that are not one leg of a ramp).

Shared by the lr-schedule detector and by ``lrcause``, which names an lr change as the cause of a
loss event that starts at it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from logdoctor.detectors import robust
from logdoctor.detectors.robust import FloatArray, Series
from logdoctor.model import LR, Run

#: A change of the lr by at least this factor between two logged rows can be a discontinuity.
MIN_RATIO = 1.5
#: ... and it is one when it is this many times larger than the changes next to it (a ramp's legs
#: are alike: linear warm-up, cosine decay, exponential warm-up logged at any interval).
RAMP_FACTOR = 5.0
#: Rows on each side whose changes describe the ramp the change might belong to.
NEIGHBOURS = 5


@dataclass(frozen=True, slots=True)
class LrChange:
    """One discontinuity of the lr.

    Attributes:
        row: the first row (of the lr Series) at the new lr.
        step: its training step. prev_step: the step of the last row at the old lr.
        before / after: the lr on each side.
    """

    row: int
    step: int
    prev_step: int
    before: float
    after: float

    @property
    def ratio(self) -> float:
        """after / before (inf when the lr was 0 before)."""
        return self.after / self.before if self.before > 0 else float("inf")

    @property
    def is_rise(self) -> bool:
        """True for an upward change."""
        return self.after > self.before

    def describe(self) -> str:
        """``"the lr jumped from 0.38 to 30 at step 320"`` (or dropped)."""
        verb = "jumped" if self.is_rise else "dropped"
        return f"the lr {verb} from {self.before:.3g} to {self.after:.3g} at step {self.step}"


def lr_series(run: Run) -> Series:
    """The logged lr (finite, non-negative rows); empty when the run has no lr column."""
    s = robust.series(run, LR)
    keep = s.values >= 0
    return Series(s.steps[keep], s.values[keep], s.lines[keep], s.log_scale)


def _neighbour_change(d: FloatArray, i: int) -> float:
    """Median absolute lr change of the rows around change ``i`` (itself excluded)."""
    lo, hi = max(0, i - NEIGHBOURS), min(d.size, i + NEIGHBOURS + 1)
    around = np.abs(np.concatenate([d[lo:i], d[i + 1 : hi]]))
    return float(robust.median(around)) if around.size else 0.0


def discontinuities(s: Series, min_ratio: float = MIN_RATIO, ramp_factor: float = RAMP_FACTOR) -> list[LrChange]:
    """Changes by ``min_ratio`` or more between consecutive rows that are ``ramp_factor`` times
    larger than the neighbouring changes. A change from an lr of 0 (the start of a warm-up) is
    never one."""
    v = s.values
    if v.size < 3:
        return []
    d = np.diff(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(v[:-1] > 0, v[1:] / np.where(v[:-1] > 0, v[:-1], 1.0), np.inf)
    cand = np.flatnonzero((v[:-1] > 0) & ((r >= min_ratio) | (r <= 1.0 / min_ratio)))
    out: list[LrChange] = []
    for i in cand.tolist():
        if abs(d[i]) > ramp_factor * _neighbour_change(d, i):
            out.append(LrChange(i + 1, int(s.steps[i + 1]), int(s.steps[i]), float(v[i]), float(v[i + 1])))
    return out


def changes(run: Run, min_ratio: float = MIN_RATIO) -> list[LrChange]:
    """Every lr discontinuity of the run, in step order (none when the lr is not logged)."""
    return discontinuities(lr_series(run), min_ratio=min_ratio)
