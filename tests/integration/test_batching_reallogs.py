"""Real public logs: no batching verdict the data does not support (files that parse today)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.errors import LogdoctorError

pytestmark = pytest.mark.reallogs


def test_no_real_log_is_called_sorted_or_static(reallogs_dir: Path) -> None:
    with (reallogs_dir / "MANIFEST.tsv").open() as fh:
        names = [row["file"] for row in csv.DictReader(fh, delimiter="\t")]
    judged = 0
    for name in names:
        try:
            run = pipeline.load(str(reallogs_dir / name))
        except LogdoctorError:
            continue  # a format the parsers do not read yet
        verdict = BatchingDiagnosis().diagnose(run, []).verdict
        judged += 1
        # none of these logs carries the per-batch evidence for a sorted or static claim
        assert verdict.batching not in ("sorted", "static"), f"{name}: {verdict.summary}"
    if judged == 0:
        pytest.skip("no real log parses yet")
