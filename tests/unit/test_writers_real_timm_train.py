"""Real runs of timm's own train.py (fixtures/writers/timm_train, made by fixtures/writers/gen_timm_train.py on the
CPU): each run's captured stdout+stderr (``train.log``) and its ``summary.csv`` (with its ``args.yaml``), read by
default, give the plan, the ending and the failures the generating script recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.ingest.parsers import sniff
from logdoctor.ingest.sources import open_source
from logdoctor.model import Report

RUNS = Path(__file__).resolve().parents[2] / "fixtures" / "writers" / "timm_train"
NAMES = ("healthy", "nan", "killed")
#: truth.json's ending -> logdoctor's name for it
ENDINGS = {"finished": "finished", "stopped_silently": "stopped"}
#: each file logdoctor reads -> the reader it must pick without --map, the plan's source, and whether a
#: step is an update (train.log: ``Train: {epoch} [{idx}/{updates}``) or an epoch (summary.csv)
FILES = {"train.log": ("text", "header", True), "summary.csv": ("csv", "args.yaml", False)}


def _truth(name: str) -> dict[str, object]:
    return json.loads((RUNS / name / "truth.json").read_text())


def _report(name: str, file: str) -> Report:
    return pipeline.analyze(pipeline.load(str(RUNS / name / file)))


@pytest.mark.parametrize("file", sorted(FILES))
@pytest.mark.parametrize("name", NAMES)
def test_the_plan_and_the_ending_are_the_runs(name: str, file: str) -> None:
    truth = _truth(name)
    fmt, plan_source, per_update = FILES[file]
    assert sniff(open_source(str(RUNS / name / file))).name == fmt
    st = _report(name, file).meta.structure
    assert st is not None
    epochs, logged = int(truth["planned_epochs"]), int(truth["epochs_logged"])
    per = int(truth["updates_per_epoch"]) if per_update else 1
    assert (st.planned, st.planned_source) == (epochs * per, plan_source)
    assert st.last_step == logged * per - 1  # steps count from 0 (timm's epoch and update index)
    assert st.ending == ENDINGS[str(truth["ending"])]


@pytest.mark.parametrize("file", sorted(FILES))
def test_the_healthy_run_reports_no_problem(file: str) -> None:
    report = _report("healthy", file)
    assert report.status == "ok", [f.code for f in report.problems]


@pytest.mark.parametrize("file", sorted(FILES))
def test_the_nan_run_is_a_nonfinite_loss_from_the_runs_first_nan(file: str) -> None:
    """train.py checks nothing: the run goes on to its plan, printing ``Loss: nan``; its first NaN update is
    the first non-finite step (train.log), the epoch that holds it is the first non-finite row (summary.csv)."""
    (failure,) = _truth("nan")["failures"]  # type: ignore[misc]
    report = _report("nan", file)
    found = [f for f in report.findings if f.code == "LD001"]
    assert len(found) == 1 and found[0].first_step is not None
    per = int(_truth("nan")["updates_per_epoch"]) if FILES[file][2] else 1
    first = (failure["epoch"] - 1) * per + (failure["update"] if FILES[file][2] else 0)
    assert found[0].first_step == first
    assert [f.code for f in report.problems] == ["LD001"]


@pytest.mark.parametrize("file", sorted(FILES))
def test_the_killed_run_is_a_silent_stop_before_its_plan(file: str) -> None:
    report = _report("killed", file)
    assert [f.code for f in report.problems] == ["LD016"]


def test_the_evaluations_are_the_passes_not_their_batches() -> None:
    """validate() prints one ``Test: [i/N]`` line per batch; the pass's result is its last running average,
    the value train.py writes to summary.csv (rounded as printed)."""
    import polars as pl

    for name in NAMES:
        run = pipeline.load(str(RUNS / name / "train.log"))
        table = pl.read_csv(RUNS / name / "summary.csv", schema_overrides={"eval_loss": pl.Float64})
        for ours, theirs, digits in (("val_loss", "eval_loss", 3), ("val_acc", "eval_top1", 2)):
            got = run.evals[ours].round(digits).fill_nan(None).to_list()
            assert got == table[theirs].round(digits).fill_nan(None).to_list()
