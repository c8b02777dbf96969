"""A training loss of exactly 0 (LD025): found at the edge of its thresholds, silent on real losses."""

from __future__ import annotations

import polars as pl
import pytest

from logdoctor.detectors.zeroloss import ZeroLossDetector
from logdoctor.model import Run, RunMeta, Severity


def _run(loss: list[float]) -> Run:
    n = len(loss)
    table = pl.DataFrame({"step": list(range(1, n + 1)), "loss": loss, "line_no": list(range(1, n + 1))})
    return Run(table=table.with_columns(pl.col("step").cast(pl.Int64)), meta=RunMeta(path="x", format="text"))


def _severity(loss: list[float]) -> Severity | None:
    found = ZeroLossDetector().analyze(_run(loss)).findings
    return found[0].severity if found else None


def test_a_real_loss_near_zero_is_not_zero() -> None:
    assert _severity([2.0 - i / 60 for i in range(100)] + [1e-6] * 20) is None


@pytest.mark.parametrize(
    ("zeros", "at_end", "want"),
    [
        (3, False, Severity.WARNING),  # 3 of 60 rows: 5%
        (2, False, Severity.INFO),  # fewer than min_rows
        (3, True, Severity.WARNING),
    ],
)
def test_edges(zeros: int, at_end: bool, want: Severity) -> None:
    loss = [2.0 - i / 100 for i in range(60 - zeros)]
    loss = loss + [0.0] * zeros if at_end else loss[:20] + [0.0] * zeros + loss[20:]
    assert _severity(loss) is want


def test_a_few_zeros_in_a_long_run_that_goes_on_are_info() -> None:
    loss = [2.0 - i / 1000 for i in range(200)]
    loss = loss[:50] + [0.0] * 3 + loss[50:]  # 3 of 203 rows, under 5%, not at the end
    assert _severity(loss) is Severity.INFO
