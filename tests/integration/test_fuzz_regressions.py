"""Inputs that once crashed logdoctor or gave a multi-line error under fuzzing (bench/fuzz.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.errors import LogdoctorError

CASES = sorted((Path(__file__).resolve().parents[1] / "data" / "fuzz").iterdir())


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_fuzz_regression_gives_a_report_or_one_line_error(path: Path) -> None:
    if path.suffix == ".zst":
        pytest.importorskip("zstandard")
    try:
        report = pipeline.analyze(pipeline.load(str(path)))
    except LogdoctorError as err:
        assert str(err).strip() and "\n" not in str(err).strip()
    else:
        assert report.series.steps >= 1
