"""Real output of clu's LoggingWriter under absl logging (a JAX program run on the CPU), read by default.

fixtures/writers/clu/ holds three ``python -m fixtures.writers.clu_train --alsologtostderr > train.log
2>&1`` runs of fixtures/writers/gen_clu.py, each with the truth its program knew (truth.json): a healthy
run, one whose loss turns NaN and keeps logging ``nan``, and one that raises mid-run (a traceback).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.model import Report, Severity

RUNS = Path(__file__).resolve().parents[2] / "fixtures" / "writers" / "clu"


def _report(name: str) -> tuple[Report, dict]:
    truth = json.loads((RUNS / name / "truth.json").read_text())
    return pipeline.analyze(pipeline.load(str(RUNS / name / "train.log"))), truth


@pytest.mark.parametrize("name", ["healthy", "nan", "crashed"])
def test_rows_plan_and_ending_agree_with_the_program(name: str) -> None:
    report, truth = _report(name)
    run, st = report.run, report.run.meta.structure
    assert st is not None
    assert run.table.height == truth["train_rows"]  # the [N] loss lines only: no steps_per_sec/uptime row
    assert st.planned == truth["planned_steps"] and st.planned_source == "config"  # [Hyperparameters] num_train_steps
    assert st.ending == truth["ending"]
    assert "lr" in run.table.columns and not any(c.startswith("i1207") for c in run.table.columns)
    # the eval collection: every eval_every steps, until the run stopped
    assert run.evals["step"].to_list() == list(range(100, truth["last_step"] + 1, truth["eval_every"]))


def test_the_healthy_run_reports_no_problem() -> None:
    report, _ = _report("healthy")
    assert report.status == "ok", [(f.code, f.message[:80]) for f in report.problems]


def test_the_nan_run_is_an_error_from_the_first_logged_nan() -> None:
    report, truth = _report("nan")
    (nan,) = [f for f in report.findings if f.code == "LD001"]
    first = next(f for f in truth["failures"] if f["kind"] == "nan")
    assert nan.severity == Severity.ERROR
    assert (nan.first_step, nan.last_step) == (first["first_logged_step"], truth["planned_steps"])


def test_the_crash_is_an_error_after_the_last_logged_step() -> None:
    report, truth = _report("crashed")
    crash = next(f for f in truth["failures"] if f["kind"] == "crash")
    (stop,) = [f for f in report.findings if f.code == "LD010"]
    assert stop.severity == Severity.ERROR and stop.first_step == crash["last_logged_step"]
    assert "ScopeParamShapeError" in stop.message
    assert not [f for f in report.findings if f.code == "LD001"]  # the crash is no NaN


@pytest.mark.parametrize(
    ("line", "planned"),
    [
        ("I1207 12:00:00.1 1 logging_writer.py:80] [Hyperparameters] {'num_train_steps': 1000, 'seed': 0}", 1000),
        ("config: num_train_steps_per_epoch: 50", None),  # another quantity, no plan
        ("config: max_num_train_steps_seen: 50", None),
    ],
)
def test_num_train_steps_is_a_plan_only_under_its_own_name(tmp_path: Path, line: str, planned: int | None) -> None:
    rows = [
        f"I1207 12:00:{s % 60:02d}.1 1 logging_writer.py:48] [{s}] loss={3 - s / 1000:.4f}" for s in range(10, 210, 10)
    ]
    path = tmp_path / "train.log"
    path.write_text("\n".join([line, *rows]) + "\n")
    st = pipeline.load(str(path)).meta.structure
    assert st is not None and st.planned == planned
