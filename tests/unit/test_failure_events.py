"""Failure events anywhere in a log: read into events, placed on the run's rows, reported once per class."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.ingest.parsers.events import scan_events
from logdoctor.ingest.parsers.lexicon import PER_LINE, SIGNALS
from logdoctor.model import Finding, Report, Severity


def _body(rows: int, start: int = 1, planned: int = 1000) -> list[str]:
    return [f"step {k * 10}/{planned} | loss {3 - k / 100:.4f} | lr 1.0e-04" for k in range(start, start + rows)]


def _report(tmp_path: Path, lines: list[str]) -> Report:
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    return pipeline.analyze(pipeline.load(str(path)))


def _codes(report: Report, *codes: str) -> list[Finding]:
    return [f for f in report.findings if f.code in codes]


def test_every_signal_names_its_source_and_compiles_in_both_engines() -> None:
    for s in SIGNALS:
        assert s.sources.strip() and s.cause.strip()
        re.compile(s.pattern)
        pl.Series(["x"]).str.contains(s.pattern)  # the Rust engine reads it too


def test_recovered_lines_are_one_event_each_and_absorb_their_detail() -> None:
    lines = pl.DataFrame(
        {
            "line_no": [10, 11, 40, 41, 90],
            "line": [
                "fairseq.trainer - OOM: Ran out of memory with exception: CUDA out of memory. Tried to allocate 2 GiB",
                "fairseq.trainer - attempting to recover from OOM in forward/backward pass",
                "WARNING CUDA out of memory with batch=16. Reducing to batch=8 and retrying (1/3).",
                "The grad norm is nan. Skipping updating the model.",
                "Epoch 00023: early stopping",
            ],
        }
    )
    got = scan_events(lines)
    assert [(e.kind, e.line) for e in got] == [
        ("oom_recovered", 11),
        ("oom_recovered", 40),
        ("nonfinite_skipped", 41),
        ("early_stopping", 90),
    ]
    assert all(e.role in PER_LINE for e in got)


def test_a_training_row_splits_two_failures_into_two_blocks() -> None:
    lines = pl.DataFrame({"line_no": [5, 7], "line": ["Killed", "ValueError: bad"]})
    import numpy as np

    assert [e.kind for e in scan_events(lines, np.array([6]))] == ["killed", "exception"]
    assert [e.kind for e in scan_events(lines)] == ["killed"]


def test_recovered_ooms_mid_run_are_one_warning_with_count_steps_and_first_line(tmp_path: Path) -> None:
    oom = "| WARNING: ran out of memory, skipping batch"
    lines = [*_body(40), oom, *_body(20, 41), oom, *_body(40, 61)]
    report = _report(tmp_path, lines)
    found = _codes(report, "LD012")
    assert len(found) == 1 and found[0].severity is Severity.WARNING
    f = found[0]
    assert f.evidence["count"] == 2 and f.line == 41 and (f.first_step, f.last_step) == (400, 600)
    assert "ran out of memory" in f.message and report.status == "warning"


def test_an_oom_printed_mid_run_without_a_relaunch_was_caught(tmp_path: Path) -> None:
    lines = [*_body(40), "RuntimeError: CUDA out of memory. Tried to allocate 1.00 GiB", *_body(60, 41)]
    found = _codes(_report(tmp_path, lines), "LD012", "LD014", "LD010")
    assert [(f.code, f.severity) for f in found] == [("LD012", Severity.WARNING)]


def test_skipped_nonfinite_batches_are_one_warning(tmp_path: Path) -> None:
    skip = "WARNING: The grad norm is nan. Skipping updating the model."
    lines = [*_body(30), skip, skip, *_body(30, 31), skip, *_body(40, 61)]
    found = _codes(_report(tmp_path, lines), "LD013")
    assert len(found) == 1 and found[0].evidence["count"] == 3 and found[0].severity is Severity.WARNING


def test_a_crash_then_a_relaunch_is_a_warning_and_a_caught_traceback_is_nothing(tmp_path: Path) -> None:
    crash = ["Traceback (most recent call last):", '  File "train.py", line 3', "RuntimeError: NCCL error in: x"]
    relaunch = [*_body(30), *crash, "Resuming training from checkpoint checkpoint-300", *_body(70, 31)]
    found = _codes(_report(tmp_path, relaunch), "LD014")
    assert len(found) == 1 and found[0].severity is Severity.WARNING and found[0].first_step == 300
    caught = [*_body(30), "Traceback (most recent call last):", "ValueError: x", *_body(70, 31)]
    assert _codes(_report(tmp_path, caught), "LD014", "LD010", "LD012") == []


@pytest.mark.parametrize(
    ("tail", "kind", "ending", "severity"),
    [
        ([" 45%|####5     | 450/1000 [01:10<01:25, 6.4it/s]Killed"], "killed", "crashed", Severity.ERROR),
        (
            ["slurmstepd: error: *** JOB 42221 ON clr1247 CANCELLED AT 2022-04-14T16:20:46 DUE TO TIME LIMIT ***"],
            "time_limit",
            "terminated",
            Severity.WARNING,  # cut at step 600 of 1000: not completed
        ),
        (  # slurm names no reason for scancel: the job's user cancelled it
            ["slurmstepd: error: *** JOB 167438 ON gpu12 CANCELLED AT 2023-03-02T10:11:12 ***"],
            "job_cancelled",
            "cancelled",
            Severity.INFO,
        ),
        (  # Paddle's SignalHandle: SIGTERM from another process (here its launcher), no person named
            [
                "Error Message Summary:",
                "FatalError: `Termination signal` is detected by the operating system.",
                "  [SignalInfo: *** SIGTERM (@0x182d35) received by PID 1584514 (TID 0x7f2f) from PID 1584437 ***]",
            ],
            "terminated",
            "terminated",
            Severity.WARNING,
        ),
        (
            ["Detected KeyboardInterrupt, attempting graceful shutdown ..."],
            "keyboard_interrupt",
            "interrupted",
            Severity.INFO,
        ),
        (
            ["[rank3]:[E ProcessGroupNCCL.cpp:577] [Rank 3] Watchdog caught collective operation timeout: x"],
            "nccl_timeout",
            "crashed",
            Severity.ERROR,
        ),
        (  # speechbrain/core.py check_loss_isfinite, past nonfinite_patience (logger warnings before it)
            [
                "speechbrain.core - Patience not yet exhausted.",
                "Traceback (most recent call last):",
                '  File "train.py", line 141, in <module>',
                "ValueError: Loss is not finite and patience is exhausted. To debug, wrap `fit()` with "
                "autograd's `detect_anomaly()`, e.g.",
            ],
            "nan_guard",
            "crashed",
            Severity.ERROR,
        ),
    ],
)
def test_the_failure_after_the_last_row_is_the_ending(
    tmp_path: Path, tail: list[str], kind: str, ending: str, severity: Severity
) -> None:
    report = _report(tmp_path, [*_body(60), *tail])
    st = report.meta.structure
    assert st is not None and st.failure is not None and (st.failure.kind, st.ending) == (kind, ending)
    found = _codes(report, "LD010")
    assert len(found) == 1 and found[0].severity is severity and found[0].first_step == 600
    assert _codes(report, "LD016") == []


def test_speechbrains_patience_warning_alone_is_no_failure(tmp_path: Path) -> None:
    report = _report(tmp_path, [*_body(30), "speechbrain.core - Patience not yet exhausted.", *_body(30, start=31)])
    st = report.meta.structure
    assert st is not None and st.events == () and st.failure is None


def test_a_nccl_setting_printed_at_start_is_no_failure(tmp_path: Path) -> None:
    head = ["[INFO] [launch.py:129:main] 0 NCCL_IB_TIMEOUT=20", "x NCCL INFO NCCL_IB_TIMEOUT set by environment to 22"]
    report = _report(tmp_path, [*head, *_body(100, planned=1000)])
    st = report.meta.structure
    assert st is not None and st.events == () and st.failure is None and st.ending == "finished"


def test_a_followed_log_keeps_the_events_of_a_chunk_without_steps() -> None:
    from logdoctor.ingest.aliases import FieldMap
    from logdoctor.ingest.chunks import ChunkParser

    chunks = ChunkParser("a.log", FieldMap())
    first = "\n".join(_body(30)) + "\n"
    chunks.sniff(first.encode())
    chunks.parse(first.encode())
    chunks.parse(b"Traceback (most recent call last):\nRuntimeError: CUDA error: out of memory\n")
    events = chunks.facts.result(pl.DataFrame(), pl.DataFrame(), chunks.lines, {}).events
    assert [(e.kind, e.line, e.block_line) for e in events] == [("cuda_oom", 32, 31)]


def test_sockeye_convergence_line_is_an_early_stop_and_its_continue_line_is_not(tmp_path: Path) -> None:
    """sockeye/training.py _determine_convergence: 'Maximum number of not improved checkpoints reached'
    returns True (the loop stops); 'Sufficient improvement to continue' is the same check passing."""
    stop = (
        "[INFO:sockeye.training] Maximum number of not improved checkpoints reached: "
        "improvement 0.000000 <= 0.000000 over 10 checkpoints"
    )
    go = "[INFO:sockeye.training] Sufficient improvement to continue: 0.009170 > 0.000000 over 10 checkpoints"
    st = _report(tmp_path, [*_body(60), go, stop]).meta.structure
    assert st is not None and st.ending == "early_stopped"
    st = _report(tmp_path, [*_body(60), go]).meta.structure
    assert st is not None and st.ending != "early_stopped"


SIGTERM = ["torch.distributed.elastic.multiprocessing.api.SignalException: Process 9724 got signal: 15"]


def _ld010_of(tmp_path: Path, lines: list[str]) -> Finding:
    (found,) = _codes(_report(tmp_path, lines), "LD010")
    return found


def test_sigterm_before_the_plan_is_a_warning_and_after_it_information(tmp_path: Path) -> None:
    """A stop from outside cuts the loop: at step 980 of 1000 (two logging intervals short) the run is
    not completed (warning); at step 990, within one interval of its plan, it had reached it (structure's
    ``finished``), and the SIGTERM came after (info)."""
    short = _ld010_of(tmp_path, [*_body(98), *SIGTERM])
    assert short.severity is Severity.WARNING and "not completed" in short.message
    done = _ld010_of(tmp_path, [*_body(99), *SIGTERM])
    assert done.severity is Severity.INFO and "not completed" not in done.message


def test_sigterm_with_no_plan_is_a_warning_that_names_the_missing_plan(tmp_path: Path) -> None:
    rows = [f"step {k * 10} | loss {3 - k / 100:.4f} | lr 1.0e-04" for k in range(1, 61)]
    found = _ld010_of(tmp_path, [*rows, *SIGTERM])
    assert found.severity is Severity.WARNING and "no planned length is stated" in found.message


def test_a_person_s_stop_before_the_plan_stays_information(tmp_path: Path) -> None:
    for tail in (["KeyboardInterrupt"], ["slurmstepd: error: *** JOB 1 ON gpu1 CANCELLED AT 2023-03-02T10:11:12 ***"]):
        assert _ld010_of(tmp_path, [*_body(30), *tail]).severity is Severity.INFO


def test_ctrl_c_relayed_by_a_launcher_as_sigterm_is_a_person_s_stop(tmp_path: Path) -> None:
    """DeepSpeed's launch.py after a Ctrl-C: the workers' KeyboardInterrupt tracebacks, then the launcher
    kills them and logs the SIGTERM it got (Megatron-DeepSpeed's examples/MoE logs end so)."""
    tail = [
        "Traceback (most recent call last):",
        '  File "pretrain_gpt.py", line 3, in <module>',
        "KeyboardInterrupt",
        "[2022-10-29 00:11:49,560] [INFO] [launch.py:286:sigkill_handler] Killing subprocess 58800",
        "[2022-10-29 00:11:52,534] [INFO] [launch.py:295:sigkill_handler] Main process received SIGTERM, exiting",
    ]
    report = _report(tmp_path, [*_body(30), *tail])
    st = report.meta.structure
    assert st is not None and st.failure is not None and st.failure.kind == "keyboard_interrupt"
    assert _codes(report, "LD010")[0].severity is Severity.INFO


@pytest.mark.parametrize(
    "line",
    [
        # ultralytics utils/torch_utils.py EarlyStopping, 8.0-8.2 and 8.3+ (after its coloured prefix)
        "Stopping training early as no improvement observed in last 3 epochs. Best results observed at epoch 15",
        "\x1b[34m\x1b[1mEarlyStopping: \x1b[0mTraining stopped early as no improvement observed in last 3 epochs.",
    ],
)
def test_both_ultralytics_early_stopping_wordings_are_an_early_stop(tmp_path: Path, line: str) -> None:
    st = _report(tmp_path, [*_body(60), line]).meta.structure
    assert st is not None and st.ending == "early_stopped"
    # the lines around it that say nothing of a stop
    other = "To update EarlyStopping(patience=3) pass a new patience value, i.e. `patience=300`"
    st = _report(tmp_path, [*_body(60), other, "Training stopped"]).meta.structure
    assert st is not None and st.ending != "early_stopped"
