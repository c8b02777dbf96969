"""Logs holding several appended fresh runs: each run analysed on its own, the report the last run's.

Fixtures: fixtures/gen_appended_runs.py (seeded) with truth; the Keras ``CSVLogger(append=True)``
file of fixtures/gen_run_structure.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from logdoctor import pipeline
from logdoctor.cli import main
from logdoctor.model import Report
from logdoctor.renderers import get_renderer
from logdoctor.renderers.jsonreport import report_dict

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures"
APPENDED = FIXTURES / "appended"


def _report(path: Path) -> Report:
    return pipeline.analyze(pipeline.load(str(path)))


def _truth(path: Path) -> dict[str, Any]:
    truth: dict[str, Any] = json.loads(path.with_name(path.name + ".truth.json").read_text())
    return truth


@pytest.mark.parametrize("name", ["three_runs.log", "last_bad.log"])
def test_each_appended_run_is_analysed_on_its_own(name: str) -> None:
    """Every run's line and step range as written, what its own analysis must find, nothing in
    the runs that are healthy; ``run_status`` is the last run's, ``status`` the file's (the worst)."""
    path = APPENDED / name
    truth, report = _truth(path), _report(path)
    assert report.run_status == truth["status"]
    order = ("ok", "warning", "error")
    assert report.status == max([p.status for p in report.runs], key=order.index)
    assert report.series.resumes == truth["resumes"]
    assert len(report.runs) == len(truth["runs"])
    for part, want in zip(report.runs, truth["runs"], strict=True):
        got = (part.index, part.first_line, part.last_line, part.first_step, part.last_step, part.rows)
        assert got == (
            want["index"],
            want["first_line"],
            want["last_line"],
            want["first_step"],
            want["last_step"],
            want["rows"],
        )
        assert part.of == len(truth["runs"])
        codes = {f.code for f in part.findings}
        assert set(want["must_find"]) <= codes, (part.index, codes)
        assert bool(codes) == want["problems"], (part.index, codes)  # must not: healthy runs stay clean
    assert [p.current for p in report.runs] == [False] * (len(report.runs) - 1) + [True]


def test_runs_are_never_joined() -> None:
    """A run's rows are its own: the diverged first run's NaN rows are not in the last run, and
    the long healthy run's evaluations are placed on its own steps, not counted as steps."""
    run = pipeline.load(str(APPENDED / "three_runs.log"))
    first, middle = run.earlier
    assert run.table.height == 12 and first.table.height == 70 and middle.table.height == 600
    assert int(first.table["loss"].is_nan().sum()) == 13 and not run.table["loss"].is_nan().any()
    assert middle.evals["step"].to_list() == [100, 200, 300, 400, 500, 600]
    assert run.evals.height == 0  # the other runs' evaluations stay theirs
    assert run.meta.structure is not None and middle.meta.structure is not None
    assert run.meta.structure.eval_metrics == () and middle.meta.structure.eval_metrics != ()


def test_check_gates_on_every_run_unless_told_last(tmp_path: Path) -> None:
    """The file's status covers every run in it, and so does ``check``: an earlier run that diverged
    fails it (issue 29), unless ``--runs last`` asks for the last run only; a bad last run fails both."""
    assert main(["check", str(APPENDED / "three_runs.log"), "-q"]) == 1
    assert main(["check", str(APPENDED / "three_runs.log"), "-q", "--runs", "last"]) == 0
    assert main(["check", str(APPENDED / "last_bad.log"), "-q"]) == 1
    assert main(["check", str(APPENDED / "last_bad.log"), "-q", "--runs", "last"]) == 1
    assert main(["check", str(APPENDED / "three_runs.log"), "-q", "--runs", "first"]) == 2


def test_resumes_from_checkpoints_stay_one_run() -> None:
    """Must not: a counter that goes back, but not to where the log began, is a resume of the same
    run (the later write wins), never a new run."""
    path = APPENDED / "resumed_checkpoints.log"
    truth, report = _truth(path), _report(path)
    assert report.runs == () and report.run.earlier == ()
    assert report.series.resumes == truth["resumes"]
    assert report.run.table.height == truth["rows"]
    assert report_dict(report)["runs"] == []


def test_keras_csvlogger_append_runs() -> None:
    """A Keras CSVLogger(append=True) file: four runs by their epoch counter, none with a problem
    (a fresh run's first loss is never a divergence), the short ones counted, not listed."""
    report = _report(FIXTURES / "structure" / "keras_csv_append.csv")
    assert [p.rows for p in report.runs] == [40, 4, 5, 12]
    assert not any(p.findings for p in report.runs) and report.status == "ok"
    assert [p.too_short for p in report.runs[:3]] == [False, True, True]


def test_json_runs_array() -> None:
    """JSON: one entry per run, index/lines/steps/rows/status/findings with their evidence."""
    doc = report_dict(_report(APPENDED / "three_runs.log"))
    assert doc["format_version"] == 4 and doc["status"] == "error" and doc["run_status"] == "ok"
    first = doc["runs"][0]
    assert (first["index"], first["first_line"], first["last_line"], first["status"]) == (1, 1, 70, "error")
    nonfinite = next(f for f in first["findings"] if f["code"] == "LD001")
    assert nonfinite["evidence"] and nonfinite["first_step"] == 58
    assert [r["current"] for r in doc["runs"]] == [False, False, True]
    assert doc["runs"][1]["findings"] == [] and doc["runs"][2]["too_short"] is True


@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "junit", "github"])
def test_renderers_show_earlier_runs(fmt: str) -> None:
    """Every human and CI format names the earlier run with problems by index, lines and steps."""
    report = _report(APPENDED / "three_runs.log")
    text = get_renderer(fmt)(width=200).render(report)
    assert "run 1 of 3 (lines 1-70, steps 1-70)" in text
    assert "LD002" in text


def test_text_report_health_first_and_no_noise() -> None:
    """The headline names the worst earlier run (never a bare "No problems found" above a file whose
    earlier run diverged) and says the last run is clean; the healthy run is summarised in one line,
    the short last run is not listed as an earlier run at all."""
    text = get_renderer("text")(width=100).render(_report(APPENDED / "three_runs.log"))
    head = text.split("Earlier runs in this log")[0]
    assert "No problems found" not in head and "ERROR" in head and "earlier run 1 of 3" in head
    assert "the last run in this log (this report): no problems found" in head
    earlier = text.split("Earlier runs in this log")[1].split("Evidence behind")[0]
    assert earlier.count("run 1 of 3") == 1 and "no problems found in run 2 of 3" in earlier
    assert "run 3 of 3 (" not in earlier
    quiet = get_renderer("text")(verbosity=-1).render(_report(APPENDED / "three_runs.log"))
    assert quiet.startswith(f"{APPENDED / 'three_runs.log'}: error (earlier run 1 of 3: LD")
    assert "last run: no problems found" in quiet and "earlier runs: 1 of 2 with problems" in quiet


def test_log_written_newest_first_is_not_split(tmp_path: Path) -> None:
    """Must not: steps that only go down (a log written newest first) are no chain of one-row runs."""
    path = tmp_path / "reversed.log"
    path.write_text("".join(f"step={s} loss={2 + 0.01 * s:.3f}\n" for s in range(60, 0, -1)))
    report = _report(path)
    assert report.runs == () and report.run.table.height == 60
