"""Real public logs: no batching verdict the data does not support (files that parse today)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.detectors.periodicity import PeriodicityDetector
from logdoctor.detectors.spikes import SpikeDetector
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.errors import LogdoctorError

pytestmark = pytest.mark.reallogs


def test_no_real_log_is_called_sorted_or_static_and_only_gbl_ones_grouped(reallogs_dir: Path) -> None:
    with (reallogs_dir / "MANIFEST.tsv").open() as fh:
        names = [row["file"] for row in csv.DictReader(fh, delimiter="\t")]
    judged = 0
    for name in names:
        try:
            run = pipeline.load(str(reallogs_dir / name))
        except LogdoctorError:
            continue  # a format the parsers do not read yet
        # the detectors the verdict consumes: spikes (LD101/LD102) and the loss period (LD201)
        findings = [*SpikeDetector().analyze(run).findings, *PeriodicityDetector().analyze(run).findings]
        verdict = BatchingDiagnosis().diagnose(run, findings).verdict
        judged += 1
        # none of these logs carries the per-batch evidence for a sorted or static claim
        assert verdict.batching not in ("sorted", "static"), f"{name}: {verdict.summary}"
        # the three HF group_by_length=True logs show its megabatch period; no other log is grouped
        assert (verdict.batching == "grouped") == ("gbl_true" in name), f"{name}: {verdict.summary}"
    if judged == 0:
        pytest.skip("no real log parses yet")
