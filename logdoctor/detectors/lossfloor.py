"""Heuristic (LD420): a loss that falls implausibly fast to near zero early in the run.

Real training on real data rarely drives the loss to ~0 within the first few percent of a run; when
it does, the usual causes are label leakage (the target readable from the inputs), a loss computed
on the wrong tensors, or data that is all one class. It is a heuristic and says so: memorising a tiny
dataset does the same, legitimately.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors import robust
from logdoctor.detectors.base import NOT_POSITIVE, TOO_FEW_ROWS, Analyzer, Detection
from logdoctor.model import LOSS, Run
from logdoctor.options import Option, fraction, int_opt, positive


class LossFloorDetector(Analyzer):
    """LD420 when the smoothed loss reaches ``floor_frac`` x its start (and ``abs_floor``) within ``early_frac``."""

    name = "loss-floor"
    options: ClassVar[tuple[Option, ...]] = (
        fraction("floor_frac"),
        positive("abs_floor"),
        fraction("early_frac"),
        int_opt("min_rows", 3),
        int_opt("smooth_rows", 1),
    )

    def __init__(
        self,
        *,
        floor_frac: float = 0.01,
        abs_floor: float = 0.05,
        early_frac: float = 0.1,
        min_rows: int = 30,
        smooth_rows: int = 5,
    ) -> None:
        self.floor_frac = floor_frac
        self.abs_floor = abs_floor
        self.early_frac = early_frac
        self.min_rows = min_rows
        self.smooth_rows = smooth_rows

    def analyze(self, run: Run) -> Detection:
        """At most one finding: the first row where the smoothed loss sits on the floor, if early."""
        s = robust.series(run, LOSS)
        if s.n < self.min_rows or not s.log_scale:
            return Detection(skipped=TOO_FEW_ROWS if s.n < self.min_rows else NOT_POSITIVE)
        start = float(np.median(s.values[:3]))
        sm = robust.rolling_median(s.values, self.smooth_rows)
        floor = min(self.floor_frac * start, self.abs_floor)
        hit = np.flatnonzero(sm <= floor)
        if hit.size == 0:
            return Detection()
        row = int(hit[0])
        early = max(1, int(self.early_frac * s.n))
        rest = float(np.median(s.values[row:]))
        if row >= early or rest > 3 * floor:
            return Detection()
        ev = {
            "start_loss": start,
            "floor": floor,
            "reached_step": int(s.steps[row]),
            "reached_row": row,
            "row_fraction": round(row / s.n, 4),
            "median_after": rest,
            "early_frac": self.early_frac,
            "heuristic": True,
        }
        return Detection(
            (
                codes.finding(
                    "LD420",
                    f"Heuristic: the loss fell from {start:.4g} to near zero ({sm[row]:.2g}) by step {s.steps[row]} "
                    f"({row / s.n:.0%} into the run) and stayed there (median {rest:.2g}): implausibly fast for real "
                    f"learning - check for label leakage or a broken loss.",
                    first_step=int(s.steps[0]),
                    last_step=int(s.steps[row]),
                    line=int(s.lines[row]) or None,
                    confidence=0.6,
                    evidence=ev,
                ),
            )
        )
