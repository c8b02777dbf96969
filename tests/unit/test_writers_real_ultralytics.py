"""Real Ultralytics runs (fixtures/writers/ultralytics, made by fixtures/writers/gen_ultralytics.py on the CPU):
each run folder's ``results.csv`` (with its ``args.yaml``) and its captured console, read by default, end as the
generating script knows they ended."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.ingest.parsers import sniff
from logdoctor.ingest.sources import open_source
from logdoctor.model import Report

RUNS = Path(__file__).resolve().parents[2] / "fixtures" / "writers" / "ultralytics"
NAMES = ("finished", "early_stopped", "killed")
#: truth.json's ending -> logdoctor's name for it
ENDINGS = {"finished": "finished", "early_stopped": "early_stopped", "stopped_silently": "stopped"}
#: each file logdoctor reads -> the reader it must pick without --map, and the plan's source
FILES = {"results.csv": ("csv", "args.yaml"), "console.log": ("epoch_table", "header")}


def _truth(name: str) -> dict[str, object]:
    return json.loads((RUNS / name / "truth.json").read_text())


def _report(name: str, file: str) -> Report:
    return pipeline.analyze(pipeline.load(str(RUNS / name / file)))


@pytest.mark.parametrize("file", sorted(FILES))
@pytest.mark.parametrize("name", NAMES)
def test_the_plan_and_the_ending_are_the_writers(name: str, file: str) -> None:
    truth = _truth(name)
    fmt, plan_source = FILES[file]
    assert sniff(open_source(str(RUNS / name / file))).name == fmt
    report = _report(name, file)
    st = report.meta.structure
    assert st is not None
    assert (st.planned, st.planned_source) == (truth["planned_epochs"], plan_source)
    assert st.last_step == truth["epochs_logged"]
    assert st.ending == ENDINGS[str(truth["ending"])]
    assert not truth["failures"] and st.failure is None


@pytest.mark.parametrize("file", sorted(FILES))
def test_the_killed_run_is_a_stop_before_its_plan(file: str) -> None:
    truth = _truth("killed")
    report = _report("killed", file)
    stops = [f for f in report.findings if f.code == "LD016"]
    assert len(stops) == 1
    assert f"stopped at epoch {truth['epochs_logged']} of {truth['planned_epochs']}" in stops[0].message


@pytest.mark.parametrize("file", sorted(FILES))
def test_the_early_stop_is_no_stop_before_the_plan(file: str) -> None:
    report = _report("early_stopped", file)
    assert "LD016" not in {f.code for f in report.findings}


@pytest.mark.parametrize("file", sorted(FILES))
def test_the_finished_run_reports_no_problem(file: str) -> None:
    """mAP50-95 from scratch: 0 for 11 epochs, 0.04 at 15, back under 0.01 for 6 epochs, then up to 0.23:
    a dip while the metric is still in its first rise is no collapse (its level before the dip is 17% of
    its best)."""
    report = _report("finished", file)
    assert report.status == "ok", [f.code for f in report.findings]


@pytest.mark.parametrize("file", sorted(FILES))
def test_the_killed_run_at_map_zero_after_three_epochs_is_no_collapse(file: str) -> None:
    """Every score 0 at its 3 evaluations, killed at epoch 3 of 12: the start of a detector trained from
    scratch (the finished run sat at 0 for 11), so its only problem is the stop."""
    report = _report("killed", file)
    assert [f.code for f in report.problems] == ["LD016"]
