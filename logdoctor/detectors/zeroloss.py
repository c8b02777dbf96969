"""A training loss of exactly 0 (LD025): nothing is learned from those batches."""

from __future__ import annotations

from typing import ClassVar

from logdoctor import codes
from logdoctor.detectors import robust
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.model import LINE_NO, LOSS, STEP, Run, Severity
from logdoctor.options import Option, fraction, int_opt


class ZeroLossDetector(Analyzer):
    """Rows whose training loss is exactly 0.

    Null: none of the 281 runs of the real logs, the fixtures and the public logs of
    bench/realruns logs an exact 0 (a cross-entropy or regression loss of real data never is). An
    exact 0 is every target masked out (an ignore-index or a padding mask that covers the labels),
    an empty batch, a loss that is not computed, or a tiny dataset memorised down to the printed
    precision. A warning from ``min_rows`` such rows that make at least ``min_frac`` of the run
    (or end it), info below.
    """

    name = "zero_loss"
    options: ClassVar[tuple[Option, ...]] = (int_opt("min_rows", 1), fraction("min_frac"))

    def __init__(self, *, min_rows: int = 3, min_frac: float = 0.05) -> None:
        self.min_rows = min_rows
        self.min_frac = min_frac

    def analyze(self, run: Run) -> Detection:
        """One finding: how many rows log a loss of exactly 0, the first one and the longest stretch."""
        t = run.table.select(STEP, LOSS, LINE_NO).drop_nulls(LOSS)
        zero = t[LOSS].to_numpy() == 0.0
        if not zero.any():
            return Detection()
        steps = t[STEP].to_numpy()
        starts, ends = robust.runs_of(zero)
        n = int(zero.sum())
        ends_run = bool(zero[-min(self.min_rows, zero.size) :].all())
        warn = n >= self.min_rows and (n >= self.min_frac * zero.size or ends_run)
        first = int(starts[0])
        msg = (
            f"The training loss is exactly 0 at {n:,} of {zero.size:,} rows, first at step {int(steps[first]):,}"
            f"{' and to the end of the log' if ends_run else ''}: no loss is that low on real data; every target "
            "may be masked out (ignore-index or padding over the labels), the batch empty, the loss not computed, "
            "or a tiny dataset memorised."
        )
        line = t[LINE_NO][first]
        return Detection(
            (
                codes.finding(
                    "LD025",
                    msg,
                    severity=Severity.WARNING if warn else Severity.INFO,
                    first_step=int(steps[first]),
                    last_step=int(steps[int(ends[-1]) - 1]),
                    line=int(line) if line is not None else None,
                    evidence={
                        "n_zero": n,
                        "fraction": round(n / zero.size, 6),
                        "longest_run": int((ends - starts).max()),
                        "to_the_end": ends_run,
                    },
                    confidence=0.8,
                ),
            )
        )
