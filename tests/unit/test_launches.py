"""Logs of several launches: each with its own start, length and ending, those that died before a step too."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.model import Report, Severity

HEADER = ["***** Running training *****", "  Num Epochs = 2", "  Total optimization steps = 200"]
CRASH = [
    "Traceback (most recent call last):",
    '  File "train.py", line 40, in <module>',
    "RuntimeError: CUDA error: an illegal memory access was encountered",
]


def _rows(first: int, last: int) -> list[str]:
    return [
        f"{{'loss': {3 - k / 100:.4f}, 'learning_rate': 1e-05, 'epoch': {k / 100:.2f}}}" for k in range(first, last + 1)
    ]


def _report(tmp_path: Path, lines: list[str]) -> Report:
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    return pipeline.analyze(pipeline.load(str(path)))


def test_a_launch_that_crashed_before_its_first_step_is_listed_with_its_own_crash(tmp_path: Path) -> None:
    lines = [*HEADER, *_rows(1, 60), *CRASH, *HEADER, *CRASH, *HEADER, *_rows(1, 200)]
    report = _report(tmp_path, lines)
    parts = [(p.rows, p.ending, p.status, p.current) for p in report.runs]
    assert parts == [(60, "crashed", "error", False), (0, "crashed", "error", False), (200, "finished", "ok", True)]
    first, second = report.runs[0], report.runs[1]
    assert first.findings[0].code == "LD010" and first.findings[0].line == len(HEADER) + 60 + 3
    assert second.first_line == len(HEADER) + 60 + 3 + len(HEADER) + 1 and second.last_line == second.first_line + 2
    crash = second.findings[0]
    assert crash.severity is Severity.ERROR and "before its first logged step" in crash.message
    assert report.run_status == "ok" and report.status == "error"  # the current launch is fine, the file is not


def test_the_last_launch_crashing_before_its_first_step_is_in_the_headline(tmp_path: Path) -> None:
    report = _report(tmp_path, [*HEADER, *_rows(1, 200), "Training completed. Do not forget", *HEADER, *CRASH])
    st = report.meta.structure
    assert st is not None and st.ending == "finished" and st.failure is None
    found = [f for f in report.findings if f.code == "LD010"]
    assert len(found) == 1 and found[0].severity is Severity.ERROR and found[0].line == len(HEADER) + 201 + 6
    assert report.problems[0].code == "LD010" and report.run_status == "error"


def test_a_caught_traceback_before_training_is_no_launch(tmp_path: Path) -> None:
    report = _report(tmp_path, ["loading", *CRASH, "continuing without the optional kernel", *_rows(1, 200)])
    st = report.meta.structure
    assert st is not None and st.launches == () and report.runs == () and report.status == "ok"


@pytest.mark.reallogs
def test_real_log_of_five_launches(reallogs_dir: Path) -> None:
    path = reallogs_dir / "wav2vec2_xlsr_tr_clean_gbl_true_oom_restart_stdout.txt"
    lines = path.read_text(errors="replace").splitlines()
    report = pipeline.analyze(pipeline.load(str(path)))
    parts = [(p.rows > 0, p.ending) for p in report.runs]
    assert parts == [(False, "interrupted")] * 3 + [(True, "crashed"), (True, "interrupted")]
    oom = report.runs[3].findings[0]
    assert oom.code == "LD010" and oom.severity is Severity.ERROR and "OutOfMemoryError" in lines[oom.line - 1]
    assert all(lines[p.last_line - 1].strip() == "KeyboardInterrupt" for p in report.runs[:3])
