"""Real public logs: every log in the manifest parses and gets no batching verdict its data does not support."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from logdoctor import pipeline
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
def test_no_real_log_is_called_sorted_or_static(reallogs_dir: Path, name: str) -> None:
    try:
        run = pipeline.load(str(reallogs_dir / name))
    except LogdoctorError as err:  # a regression, or a new log the parsers must learn: both fail
        pytest.fail(f"{name} does not parse: {err}")
    verdict = BatchingDiagnosis().diagnose(run, []).verdict
    # none of these logs carries the per-batch evidence for a sorted or static claim
    assert verdict.batching not in ("sorted", "static"), f"{name}: {verdict.summary}"
