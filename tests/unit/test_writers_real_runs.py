"""logdoctor on real output of Keras (fit() stdout at verbose 1 and 2, CSVLogger), timm
(update_summary's summary.csv) and SpeechBrain (FileTrainLogger's train_log.txt, log.txt, stdout):
each writer run for real on the CPU by fixtures/writers/gen_writers.py, its truth.json written from
what the run's own callbacks saw. Every file is read by default (no --map); the ending and the plan
agree with what the file can show of the truth; a non-finite loss is found, at ERROR, in the epoch
it happened; a healthy run reports no warning or error."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

import pytest

from logdoctor import pipeline
from logdoctor.model import Finding, Report, Severity
from tests.conftest import FIXTURES

WRITERS = FIXTURES / "writers"
#: the writers gen_writers.py runs (the other folders under fixtures/writers/ are other generators', with
#: their own truth.json schema and tests)
TRUTHS = sorted(t for w in ("keras", "timm", "speechbrain") for t in (WRITERS / w).glob("*/truth.json"))
FILES = [(t.parent, name) for t in TRUTHS for name in json.loads(t.read_text())["files"]]
IDS = [f"{folder.parent.name}/{folder.name}/{name}" for folder, name in FILES]
#: truth.json's endings as logdoctor names them
ENDING = {"stopped_silently": "stopped"}


def _truth(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "truth.json").read_text())  # type: ignore[no-any-return]


@functools.cache
def _report(path: Path) -> Report:
    return pipeline.analyze(pipeline.load(str(path)))


def _found(report: Report, code: str) -> list[Finding]:
    return [f for f in report.findings if f.code == code]


def test_every_writer_has_real_runs() -> None:
    writers = {_truth(t.parent)["writer"] for t in TRUTHS}
    assert writers == {"keras", "timm", "speechbrain"}
    endings = {_truth(t.parent)["ending"] for t in TRUTHS}
    assert {"finished", "early_stopped", "crashed"} <= endings


@pytest.mark.parametrize(("folder", "name"), FILES, ids=IDS)
def test_ending_and_plan_agree_with_the_truth(folder: Path, name: str) -> None:
    truth = _truth(folder)
    shows = truth["files"][name]
    report = _report(folder / name)
    st = report.meta.structure
    assert st is not None and report.meta.format in ("text", "csv")
    assert st.ending == ENDING.get(shows["readable_ending"], shows["readable_ending"])
    if shows["states_plan"]:
        assert st.planned_epochs == truth["planned_epochs"]
        assert st.planned in (None, truth["planned_epochs"], truth["planned_epochs"] * truth["steps_per_epoch"])
    else:
        assert (st.planned, st.planned_epochs) == (None, None)
    if st.ending == "early_stopped":
        assert [f.severity for f in _found(report, "LD017")] == [Severity.INFO]


def _epoch_of(report: Report, step: int, truth: dict[str, Any]) -> int:
    """The 1-based epoch of a row: per-batch rows (more rows than epochs) count batches over the
    run; per-epoch rows are the epochs in order, whichever number the file gives the first."""
    run = pipeline.load(report.meta.path)
    steps = sorted(run.table["step"].to_list())
    if len(steps) > truth["epochs_run"] and steps[-1] > truth["epochs_run"]:
        return (step - 1) // truth["steps_per_epoch"] + 1
    return steps.index(step) + 1


FAILED = [(folder, name) for folder, name in FILES if _truth(folder)["failures"]]


@pytest.mark.parametrize(("folder", "name"), FAILED, ids=[f"{f.parent.name}/{f.name}/{n}" for f, n in FAILED])
def test_a_nonfinite_loss_is_found_where_the_file_shows_it(folder: Path, name: str) -> None:
    truth = _truth(folder)
    shows = truth["files"][name]
    report = _report(folder / name)
    (failure,) = truth["failures"]
    assert failure["kind"] == "nonfinite_loss"
    nan = _found(report, "LD001")
    if shows["nonfinite_in_rows"]:
        assert [f.severity for f in nan] == [Severity.ERROR]
        assert nan[0].first_step is not None and _epoch_of(report, nan[0].first_step, truth) == failure["epoch"]
    else:
        assert nan == []  # no row of this file holds it: nothing to place
    st = report.meta.structure
    assert st is not None
    if shows["prints_stop"] and truth["ending"] == "crashed":
        assert st.failure is not None and st.failure.kind == "nan_guard"
        assert [f.severity for f in _found(report, "LD010")] == [Severity.ERROR]
    if shows["readable_ending"] == "stopped":  # rows short of the plan, the reason elsewhere
        assert [f.severity for f in _found(report, "LD016")] == [Severity.WARNING]


HEALTHY = [(f, n) for f, n in FILES if _truth(f)["ending"] == "finished" and not _truth(f)["failures"]]


@pytest.mark.parametrize(("folder", "name"), HEALTHY, ids=[f"{f.parent.name}/{f.name}/{n}" for f, n in HEALTHY])
def test_a_healthy_run_reports_no_problem(folder: Path, name: str) -> None:
    report = _report(folder / name)
    loud = [(f.code, f.message) for f in report.findings if f.severity in (Severity.WARNING, Severity.ERROR)]
    assert loud == []
    assert report.meta.structure is not None and report.meta.structure.failure is None


def test_the_truth_is_the_runs_own() -> None:
    """truth.json agrees with the rows the writers wrote (read without logdoctor): the CSV files'
    epochs, and the first non-finite loss in the epoch the run's callbacks saw it."""
    for truth_path in TRUTHS:
        truth = _truth(truth_path.parent)
        for name in truth["files"]:
            if not name.endswith(".csv"):
                continue
            rows = (truth_path.parent / name).read_text().splitlines()
            header = rows[0].split(",")
            loss = header.index("train_loss" if "train_loss" in header else "loss")
            values = [r.split(",") for r in rows[1:]]
            assert len(values) == truth["epochs_run"]
            bad = [i + 1 for i, v in enumerate(values) if not math.isfinite(float(v[loss]))]
            assert bad[:1] == [f["epoch"] for f in truth["failures"]]
