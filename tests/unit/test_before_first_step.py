"""A run that died before its first logged step: the failure its log prints is reported (LD010 error, the
ending ``crashed``, the plan), not refused; a log with neither a training row nor a failure is still refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.cli import main
from logdoctor.errors import ParseError
from logdoctor.model import Severity
from tests.unit.blindcache import blind_log

BANNER = [
    "2025-08-26 22:39:50,101 INFO [train.py:961] Training started",
    "2025-08-26 22:39:50,102 INFO [train.py:971] Device: cuda:0",
    '2025-08-26 22:39:50,110 INFO [train.py:980] {"lr": 0.001, "batch_size": 32, "num_epochs": 20,',
    '  "model": "conformer",',
    '  "seed": 42}',
    "2025-08-26 22:39:52,300 INFO [train.py:1001] About to create model",
    "2025-08-26 22:39:53,400 INFO [train.py:1012] Number of model parameters: 109226120",
]
TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "./train.py", line 1415, in <module>',
    "    main()",
    '  File "./train.py", line 1134, in scan_batches',
    "    batch = train_dl.dataset[cuts]",
]


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def _crash(tmp_path: Path, last: str = "TypeError: __call__() missing 1 required positional argument") -> Path:
    return _write(tmp_path, [*BANNER, *TRACEBACK, last])


def test_a_traceback_before_the_first_step_is_a_crash_with_its_line_and_plan(tmp_path: Path) -> None:
    run = pipeline.load(str(_crash(tmp_path)))
    st = run.meta.structure
    assert run.table.height == 0 and st is not None
    assert (st.rows, st.ending, st.planned_epochs) == (0, "crashed", 20)
    assert st.failure is not None and st.failure.line == len(BANNER) + len(TRACEBACK) + 1
    (found,) = pipeline.analyze(run).findings
    assert (found.code, found.severity) == ("LD010", Severity.ERROR)
    assert found.message.startswith("The run stopped before its first logged step: an uncaught Python exception")
    assert f"line {st.failure.line} says `TypeError" in found.message and "planned 20 epochs" in found.message
    assert "start the run again" in found.hint and "checkpoint" not in found.hint  # none was saved


def test_an_oom_before_the_first_step_names_its_cause(tmp_path: Path) -> None:
    path = _crash(tmp_path, "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    (found,) = pipeline.analyze(pipeline.load(str(path))).findings
    assert found.code == "LD010" and found.evidence["kind"] == "cuda_oom"


def test_a_launcher_stopping_its_workers_is_no_cause_of_the_crash_after_it(tmp_path: Path) -> None:
    """torch's mp.spawn stops the other workers once one died, then raises the worker's traceback: the
    crash is the cause; a SIGTERM alone is a stop from outside (terminated, a warning)."""
    stop = "W0826 22:44:22.869694 125 torch/multiprocessing/spawn.py:146] Terminating process 12 via signal SIGTERM"
    run = pipeline.load(str(_write(tmp_path, [*BANNER, stop, *TRACEBACK, "TypeError: bad argument"])))
    assert run.meta.structure.ending == "crashed" and run.meta.structure.failure.kind == "exception"
    run = pipeline.load(str(_write(tmp_path, [*BANNER, "Received SIGTERM: got signal: 15"])))
    assert run.meta.structure.ending == "terminated"
    (found,) = pipeline.analyze(run).findings
    assert (found.code, found.severity) == ("LD010", Severity.WARNING)


@pytest.mark.parametrize("fmt", ["text", "json", "html", "markdown", "github", "junit"])
def test_every_format_renders_it_and_check_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    path = _crash(tmp_path)
    out = tmp_path / f"report.{fmt}"
    assert main(["analyze", str(path), "--format", fmt, "-o", str(out)]) == 0
    text = out.read_text()
    assert "stopped before its first logged step" in text and "Traceback (most recent call last)" not in text
    if fmt == "json":
        doc = json.loads(text)
        assert doc["status"] == "error" and doc["structure"]["ending"] == "crashed"
        assert [f["code"] for f in doc["findings"]] == ["LD010"]
    assert capsys.readouterr().err == ""
    assert main(["check", str(path)]) == 1


def test_a_log_with_no_row_and_no_failure_is_still_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, BANNER)
    with pytest.raises(ParseError, match="no training steps found"):
        pipeline.load(str(path))
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no training steps found" in err


def test_a_deprecation_warning_alone_is_no_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    warned = [
        "/opt/conda/lib/python3.8/site-packages/torch/functional.py:445: UserWarning: torch.meshgrid: in an "
        "upcoming release, it will be required to pass the indexing argument.",
        "  warnings.warn(",
        "FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated.",
    ]
    path = _write(tmp_path, [*BANNER, *warned])
    assert main(["analyze", str(path)]) == 2
    assert "no training steps found" in capsys.readouterr().err


def test_a_run_with_training_rows_is_read_as_before(tmp_path: Path) -> None:
    """The same crash after training rows: the run's rows and its ending after them, not this path."""
    rows = [f"2025-08-26 22:40:{i:02d},000 INFO [train.py:900] step {i}, loss {2.0 - i / 50:.3f}" for i in range(1, 40)]
    run = pipeline.load(str(_write(tmp_path, [*BANNER, *rows, *TRACEBACK, "TypeError: bad argument"])))
    st = run.meta.structure
    assert run.table.height == 39 and st.ending == "crashed" and st.failure.step == 39


def test_the_real_icefall_log_that_died_in_its_pre_training_memory_check() -> None:
    """Its truth (manifest_r13b): crashed at line 399 (TypeError during the OOM sanity scan, before any
    training batch); torch's spawn stops the other workers at lines 374-375 first."""
    report = pipeline.analyze(
        pipeline.load(str(blind_log("icefall_conformer_ctc_chime4_typeerror_before_first_step_training.log")))
    )
    st = report.meta.structure
    assert st is not None and (st.ending, st.failure.line, st.planned_epochs) == ("crashed", 399, 100)
    assert [(f.code, f.severity) for f in report.findings] == [("LD010", Severity.ERROR)]
    assert "TypeError" in report.findings[0].message


def test_compare_refuses_it_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No curve to compare: one line and exit 2, not a traceback (``analyze`` names the crash)."""
    crashed = _crash(tmp_path)
    rows = [f"step {i}, loss {2.0 - i / 50:.3f}" for i in range(1, 40)]
    (tmp_path / "ok").mkdir()
    healthy = _write(tmp_path / "ok", rows)
    assert main(["compare", str(healthy), str(crashed)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "stopped before its first logged step" in err


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("README.md", "# Runs\n\n| run | ending |\n|---|---|\n| `killed` | SIGKILL from the parent: exit -9 |\n"),
        ("truth.json", '{\n  "ending": "stopped",\n  "killed_by_parent": "SIGKILL",\n  "exit_status": -9\n}\n'),
        ("notes.md", "What we saw:\n\n- the job was Killed by the OOM killer\n"),
        ("README.md", "Notes:\n- validate() prints one line per batch.\n- With non-finite losses, top-1 is 33%.\n"),
    ],
)
def test_a_document_that_names_a_failure_is_no_run(
    name: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With no training row, a failure word in a document (a README describing a killed run, a run's
    truth file) is no evidence that a run died: refused as a log without steps, not reported as a crash."""
    path = tmp_path / name
    path.write_text(text)
    assert main(["analyze", str(path)]) == 2
    assert "no training step" in capsys.readouterr().err
    # the same failure printed by a program, on a line of its own, is one
    (tmp_path / "train.log").write_text("\n".join([*BANNER, "Killed"]) + "\n")
    assert pipeline.load(str(tmp_path / "train.log")).meta.structure.ending == "crashed"
