"""LD002 as a warning for a log that ends a few rows into a rise: too few rows for a sustained stretch,
high enough (``END_RATIO`` x the best level) that no healthy real run's end reaches it."""

from __future__ import annotations

import numpy as np
import pytest

from logdoctor.detectors.divergence import END_RATIO, DivergenceDetector
from logdoctor.model import Finding, Severity
from tests.unit.synth import healthy, make_run


def _settled(n: int, tail: list[float]) -> np.ndarray:
    """``n`` rows settled near 1.0 (alternating +-1%), then ``tail`` (the log's last rows)."""
    flat = 1.0 + 0.01 * (-1.0) ** np.arange(n)
    return np.r_[flat, tail]


def _ld002(loss: np.ndarray) -> tuple[Finding, ...]:
    return tuple(f for f in DivergenceDetector().analyze(make_run(loss)).findings if f.code == "LD002")


@pytest.mark.parametrize("n", [6, 18, 40])
def test_a_log_ending_two_rows_into_a_blow_up_is_a_warning(n: int) -> None:
    (f,) = _ld002(_settled(n, [6.0, 6.2]))
    assert f.severity is Severity.WARNING and f.evidence["rows_above"] == 2 and f.evidence["until_end"] is True
    assert f.first_step == n + 1 and f.last_step == n + 2


def test_the_end_ratio_edge() -> None:
    # the last two rows just below END_RATIO x the settled level, then just above it
    assert _ld002(_settled(18, [0.97 * END_RATIO] * 2)) == ()
    (f,) = _ld002(_settled(18, [1.03 * END_RATIO] * 2))
    assert f.severity is Severity.WARNING


def test_one_high_last_row_is_no_end_rise() -> None:
    # must not: one row is a spike's to judge (the smoothing cannot tell it from noise)
    assert _ld002(_settled(18, [6.0])) == ()


def test_a_sustained_rise_is_still_the_error() -> None:
    # must not downgrade: three rows or more held to the end are the sustained stretch, an error
    (f,) = _ld002(_settled(18, [6.0, 6.1, 6.2]))
    assert f.severity is Severity.ERROR


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_healthy_runs_end_silent(seed: int) -> None:
    assert _ld002(healthy(400, seed)) == ()
