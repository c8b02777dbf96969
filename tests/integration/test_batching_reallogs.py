"""Real public logs: every log in the manifest parses and gets no batching verdict its data does not support."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.detectors.periodicity import PeriodicityDetector
from logdoctor.detectors.spikes import SpikeDetector
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.errors import LogdoctorError
from tests.conftest import REALLOGS

pytestmark = pytest.mark.reallogs


def _manifest_names() -> list[str]:
    if not (REALLOGS / "MANIFEST.tsv").is_file():
        return []
    with (REALLOGS / "MANIFEST.tsv").open() as fh:
        return [row["file"] for row in csv.DictReader(fh, delimiter="\t")]


def test_the_manifest_lists_logs(reallogs_dir: Path) -> None:
    assert len(_manifest_names()) >= 43


@pytest.mark.parametrize("name", _manifest_names() or ["absent"])
def test_no_real_log_is_called_sorted_or_static_and_only_gbl_ones_grouped(reallogs_dir: Path, name: str) -> None:
    try:
        run = pipeline.load(str(reallogs_dir / name))
    except LogdoctorError as err:  # a regression, or a new log the parsers must learn: both fail
        pytest.fail(f"{name} does not parse: {err}")
    # the detectors the verdict consumes: spikes (LD101/LD102) and the loss period (LD201)
    findings = [*SpikeDetector().analyze(run).findings, *PeriodicityDetector().analyze(run).findings]
    verdict = BatchingDiagnosis().diagnose(run, findings).verdict
    # none of these logs carries the per-batch evidence for a sorted or static claim
    assert verdict.batching not in ("sorted", "static"), f"{name}: {verdict.summary}"
    # the three HF group_by_length=True logs show its megabatch period; no other log is grouped
    assert (verdict.batching == "grouped") == ("gbl_true" in name), f"{name}: {verdict.summary}"
