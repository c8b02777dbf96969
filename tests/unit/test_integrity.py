"""LD003/LD004/LD005/LD007: found where the fault is, silent where it is not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.detectors.integrity import IntegrityDetector
from logdoctor.errors import ConfigError
from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.model import Run
from logdoctor.structure.build import build_run

FORMATS = Path(__file__).resolve().parents[2] / "fixtures" / "formats"


def _codes(path: Path) -> dict[str, list]:
    found: dict[str, list] = {}
    for f in IntegrityDetector().analyze(pipeline.load(str(path))).findings:
        found.setdefault(f.code, []).append(f)
    return found


def _run(steps: list[int], loss: list[float], **cols: list) -> Run:
    data = {"step": steps, "loss": loss, "line_no": list(range(1, len(steps) + 1)), **cols}
    return build_run(ParseResult(table=pl.DataFrame(data)), "x", "jsonl")


def test_resumed_fixture_reports_resume_and_loss_jump() -> None:
    found = _codes(FORMATS / "struct_resumed.jsonl")
    (ld003,) = found["LD003"]
    assert ld003.evidence["resumes"] == 1
    assert ld003.evidence["overwritten_steps"] == 100
    assert ld003.evidence["resume_steps"] == "201"
    (ld004,) = found["LD004"]
    assert ld004.first_step == 201
    assert ld004.evidence["loss_after"] - ld004.evidence["loss_before"] == pytest.approx(
        0.6, abs=0.1
    )
    assert ld004.evidence["robust_z"] > 4


def test_resume_without_a_jump_is_info_only() -> None:
    rng = np.random.default_rng(3)
    loss = list(2.0 + rng.normal(0, 0.02, 100))
    steps = [*range(1, 61), *range(41, 81)]
    run = _run(steps, loss)
    codes = [f.code for f in IntegrityDetector().analyze(run).findings]
    assert codes == ["LD003"]


def test_interleaved_fixture_reports_nonmonotonic_not_resume() -> None:
    found = _codes(FORMATS / "struct_interleaved.jsonl")
    assert set(found) == {"LD005"}
    assert found["LD005"][0].evidence["nonmonotonic_steps"] == 100


def test_healthy_fixtures_are_silent() -> None:
    for name in ("hf_trainer_state.json", "csv_lightning_metrics.csv", "jsonl_msswift_dup.jsonl"):
        assert _codes(FORMATS / name) == {}, name


def test_degenerate_zero_column_is_reported() -> None:
    run = _run([1, 2, 3, 4], [1.0, 0.9, 0.8, 0.7], total_tokens=[0.0] * 4, lr=[1e-4] * 4)
    findings = IntegrityDetector().analyze(run).findings
    assert [(f.code, f.evidence["column"]) for f in findings] == [("LD007", "total_tokens")]


def test_thresholds_are_validated() -> None:
    with pytest.raises(ConfigError):
        IntegrityDetector(pre_window=1)
