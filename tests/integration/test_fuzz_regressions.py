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


def test_a_small_fuzz_campaign_has_0_crashes(capsys: pytest.CaptureFixture[str]) -> None:
    """README's "0 crashes", checked: bench/fuzz.py run for 80 cases (full analysis) on a seed of its own."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fuzz", Path(__file__).resolve().parents[2] / "bench" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    fuzz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz)
    assert fuzz.run(80, seed=2026, analyze=True) == 0, capsys.readouterr().err
    assert ", 0 multi-line errors, 0 crashes;" in capsys.readouterr().out
