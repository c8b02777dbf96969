"""The CI gate, many inputs, plots and config through ``main([...])``, with exact output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from logdoctor.cli import main

GOOD = "".join(f"step {i}: loss={3 - i * 0.01:.3f} len_mean={100 + i}\n" for i in range(1, 41))
NANS = GOOD.replace("step 10: loss=2.900", "step 10: loss=nan")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    Path("healthy.log").write_text(GOOD)
    Path("nan.log").write_text(NANS)
    Path("garbage.log").write_bytes(b"\x00\x01\x02binary\x00")
    return tmp_path


def test_check_exit_codes(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "healthy.log", "-q", "-j", "1"]) == 0
    assert capsys.readouterr().out == (
        "healthy.log: ok (no problems found); 2 findings (2 info); batching: inconclusive (undecided)\n"
    )
    assert main(["check", "nan.log", "-q", "-j", "1"]) == 1
    assert capsys.readouterr().out == (
        "nan.log: error (LD001 nonfinite-loss); 2 findings (1 error, 1 info); batching: not a batching problem (88%)\n"
    )
    assert main(["check", "garbage.log", "-j", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "logdoctor: error: garbage.log: binary file, not a training log\n"
    assert captured.out == ""


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        (["--exit-zero"], 0),
        (["--ignore", "LD001"], 0),
        (["--select", "LD1,LD2"], 0),
        (["--ignore", "nonfinite-loss"], 0),
        (["--fail-on", "error"], 1),
        (["--select", "LD0"], 1),
    ],
)
def test_check_gate_options(logs: Path, extra: list[str], code: int) -> None:
    assert main(["check", "nan.log", "-q", "-j", "1", *extra]) == code


def test_check_bad_options_are_usage_errors(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "nan.log", "--fail-on", "fatal"]) == 2
    assert "--fail-on: unknown severity 'fatal'" in capsys.readouterr().err
    assert main(["check", "nan.log", "--select", "LD9"]) == 2
    assert "--select: 'LD9' is not a finding code" in capsys.readouterr().err


def test_check_many_inputs_prints_summary_and_worst_exit(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "*.log", "-j", "1", "-f", "markdown"]) == 2
    out = capsys.readouterr()
    assert out.err == "logdoctor: error: garbage.log: binary file, not a training log\n"
    assert out.out.endswith(
        "### logdoctor summary\n\n"
        "| run | steps | status | worst problem | batching |\n|---|---|---|---|---|\n"
        "| garbage.log | - | unreadable | binary file, not a training log | - |\n"
        "| healthy.log | 40 | ok | none | undecided |\n"
        "| nan.log | 40 | error | nonfinite-loss | not cause |\n"
    )


def test_check_github_annotations(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "nan.log", "-f", "github", "-j", "1"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == (
        "::error file=nan.log,line=10,title=LD001 nonfinite-loss::The loss is NaN/inf at 1 step(s) in 1 run(s), "
        "first at step 10; training logged finite losses again afterwards. (step 10). "
        "Check the learning rate, mixed-precision loss scaling and the batches "
        "at the first bad step."
    )


def test_config_file_is_found_and_validated(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("pyproject.toml").write_text("[tool.logdoctor]\nignore = ['LD001']\n")
    assert main(["check", "nan.log", "-q", "-j", "1"]) == 0
    Path("logdoctor.toml").write_text("[spikes]\nz_treshold = 3\n")
    assert main(["check", "nan.log", "-q", "-j", "1"]) == 2
    assert capsys.readouterr().err.startswith(
        f"logdoctor: error: {logs / 'logdoctor.toml'}: unknown option spikes.z_treshold (known: z_threshold, "
    )
    assert main(["check", "nan.log", "-q", "-j", "1", "--config", "pyproject.toml"]) == 0


def test_analyze_exit_is_0_despite_findings_and_2_on_bad_input(logs: Path) -> None:
    assert main(["analyze", "nan.log", "-q"]) == 0
    assert main(["analyze", "nan.log", "garbage.log", "-q", "-j", "1"]) == 2


def test_analyze_plot_and_plot_command(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "nan.log", "-q", "--plot", "figs/nan.svg"]) == 0
    assert Path("figs/nan.svg").read_bytes().startswith(b"<?xml")
    assert main(["plot", "healthy.log"]) == 0
    assert Path("healthy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().err.endswith("logdoctor: wrote healthy.png\n")
    assert main(["plot", "healthy.log", "-o", "x.jpg"]) == 2
    assert main(["plot", "healthy.log", "-o", "healthy.log"]) == 2
    assert Path("healthy.log").read_text() == GOOD


def test_output_file_gets_normal_permissions(logs: Path) -> None:
    assert main(["analyze", "healthy.log", "-f", "json", "-o", "out/report.json"]) == 0
    assert Path("out/report.json").stat().st_mode & 0o044  # readable by others (umask permitting)


def test_a_reader_that_leaves_early_cuts_the_output_short_in_one_line(tmp_path: Path) -> None:
    """`| head -1`: whether the rest met a closed pipe depends on timing (a pipe buffers 64 KiB);
    either all was written (exit 0, nothing said) or the cut is one line and exit 2."""
    for i in range(30):
        (tmp_path / f"r{i:02}.log").write_text(GOOD.replace("loss=3", f"loss={i}"))
    cmd = f"{sys.executable} -m logdoctor analyze '{tmp_path}' -f junit -j 1 | head -1"
    cmd += "; exit ${PIPESTATUS[0]}"
    proc = subprocess.run(["bash", "-c", cmd], cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert proc.stdout == "<?xml version='1.0' encoding='utf-8'?>\n"
    assert "Traceback" not in proc.stderr and "Broken" not in proc.stderr
    assert (proc.returncode, proc.stderr) in (
        (0, ""),
        (2, "logdoctor: error: stdout: the reader closed the pipe (output cut short)\n"),
    )


@pytest.mark.parametrize(
    "args",
    [["check", "{log}"], ["analyze", "{log}", "-f", "json"], ["formats"], ["parse", "{log}", "--table-format", "csv"]],
)
def test_a_closed_pipe_on_stdout_is_one_line_and_exit_2(args: list[str], tmp_path: Path) -> None:
    """The reader closed its end before anything was written: EPIPE every time (not a race)."""
    log = tmp_path / "run.log"
    log.write_text(GOOD)
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "logdoctor", *[a.format(log=log) for a in args]],
            cwd=REPO,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == "logdoctor: error: stdout: the reader closed the pipe (output cut short)\n"


def test_quiet_many_inputs_one_line_each(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "healthy.log", "nan.log", "-q", "-j", "1"]) == 1
    assert capsys.readouterr().out == (
        "healthy.log: ok (no problems found); 2 findings (2 info); batching: inconclusive (undecided)\n"
        "nan.log: error (LD001 nonfinite-loss); 2 findings (1 error, 1 info); batching: not a batching problem (88%)\n"
    )


def test_no_colour_in_files_even_from_a_terminal(logs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setattr("logdoctor.renderers.console.use_color", lambda stream=None: True)
    assert main(["analyze", "nan.log", "-o", "report.txt"]) == 0
    text = Path("report.txt").read_text()
    assert "\x1b[" not in text and "nan.log" in text


FIXTURES = REPO / "fixtures" / "sim"


def test_check_on_simulated_runs_healthy_sorted_garbage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's CI example, with the real detectors and verdict: 0 healthy, 1 sorted, 2 garbage."""
    monkeypatch.chdir(FIXTURES)
    assert main(["check", "bucketed.log", "-q", "-j", "1"]) == 0
    assert capsys.readouterr().out.startswith("bucketed.log: ok (no problems found)")
    assert main(["check", "sorted_asc.log", "-q", "-j", "1"]) == 1
    assert capsys.readouterr().out.startswith("sorted_asc.log: error (LD501 sorted-batching)")
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x00\x01binary\x00" * 10)
    assert main(["check", str(garbage), "-j", "1"]) == 2
    assert capsys.readouterr().err == f"logdoctor: error: {garbage}: binary file, not a training log\n"


def test_many_inputs_print_the_summary_and_per_run_reports_on_request(
    logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["check", "healthy.log", "nan.log", "-j", "1", "-f", "markdown"])
    out = capsys.readouterr().out
    assert out.startswith("### logdoctor summary") and "### logdoctor: `nan.log`" not in out
    main(["check", "healthy.log", "nan.log", "-j", "1", "-f", "markdown", "--reports"])
    out = capsys.readouterr().out
    assert (
        out.index("### logdoctor: `healthy.log`")
        < out.index("### logdoctor: `nan.log`")
        < out.index("### logdoctor summary")
    )
