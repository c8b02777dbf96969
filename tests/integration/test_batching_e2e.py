"""End to end through the canonical text log: load -> analyze -> verdict, against each truth."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.config import AnalysisConfig
from tests.reports import report_of

#: Fixtures whose canonical lines the text parser reads (fingerprint logs need the string field).
TEXT_FIXTURES = [
    "sorted_asc",
    "sorted_desc",
    "megabatch_sorted",
    "static",
    "bucketed",
    "shuffled",
    "cyclic_lr",
    "instability",
    "nan_onset",
    "resumed",
    "running_avg",
    "staircase",
    "loss_only_sorted",
    "short_sorted",
    "long_bucketed",
    "static_fp",
    "bucketed_fp",
]


@pytest.mark.parametrize("name", TEXT_FIXTURES)
def test_text_fixture_verdict_matches_truth(fixtures_dir: Path, name: str) -> None:
    path = fixtures_dir / "sim" / f"{name}.log"
    truth = json.loads(path.with_name(f"{name}.truth.json").read_text())
    report = report_of(str(path))
    assert report.verdict.batching == truth["expected_verdict"], report.verdict.summary


def test_example_log_is_grouped_with_epoch_boundaries(fixtures_dir: Path) -> None:
    report = report_of(str(fixtures_dir / "example.log"))
    truth = json.loads((fixtures_dir / "example.truth.json").read_text())
    assert report.verdict.batching == "grouped"  # HF-style megabatches: a warning, not LD501
    assert "LD505" in {f.code for f in report.findings}
    assert "LD501" not in {f.code for f in report.findings}
    assert list(report.artifacts.epoch_boundaries) == truth["epoch_starts"]
    assert "bucketed shuffle with random batch order" in report.verdict.hint


def test_steps_per_epoch_option_is_honoured(fixtures_dir: Path) -> None:
    run = pipeline.load(str(fixtures_dir / "sim" / "static.log"))
    run = dataclasses.replace(
        run, table=run.table.drop("epoch"), meta=dataclasses.replace(run.meta, steps_per_epoch=None)
    )
    spe = json.loads((fixtures_dir / "sim" / "static.truth.json").read_text())["steps_per_epoch"]
    report = pipeline.analyze(run, AnalysisConfig(steps_per_epoch=spe))
    assert report.verdict.batching == "static"
    assert report.verdict.evidence["epoch_source"] == "--steps-per-epoch value"


def test_check_treats_grouped_as_a_warning(fixtures_dir: Path) -> None:
    from logdoctor.cli import main

    example = str(fixtures_dir / "example.log")
    assert main(["check", example, "-q", "--fail-on", "error"]) == 0  # no error: grouped is a warning
    assert main(["check", example, "-q"]) == 1  # the default gate (warning) still stops on it
