"""``--stride N`` (and ``stride`` in the config file): rows without a step are every N optimizer steps."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from logdoctor.cli import main
from logdoctor.tail.session import SessionOptions, TailSession

REPO = Path(__file__).resolve().parents[2]
TAIL = ["--format", "jsonl", "--idle-timeout", "0.3", "--poll", "--poll-interval", "0.05"]
ROWS = 120


@pytest.fixture
def stepless(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A log that prints a loss per row and no step (the rows are every N optimizer steps)."""
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "nostep.log"
    log.write_text("".join(f"loss: {2.0 * math.exp(-k / 50) + 0.5:.4f} lr: 0.001\n" for k in range(ROWS)))
    return log


def _structure(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    doc = json.loads(capsys.readouterr().out)
    return doc["structure"]


def test_analyze_places_rows_every_stride_steps(stepless: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(stepless), "--format", "json"]) == 0
    before = _structure(capsys)
    assert (before["last_step"], before["stride"], before["stride_source"]) == (ROWS, None, None)
    assert main(["analyze", str(stepless), "--format", "json", "--stride", "25"]) == 0
    st = _structure(capsys)
    assert (st["first_step"], st["last_step"], st["stride"], st["stride_source"]) == (25, 25 * ROWS, 25, "given")


def test_check_takes_the_stride(stepless: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(stepless), "--format", "json", "--stride", "8", "--fail-on", "error"]) == 0
    st = _structure(capsys)
    assert (st["last_step"], st["stride_source"]) == (8 * ROWS, "given")


def test_parse_writes_the_given_steps(stepless: Path) -> None:
    assert main(["parse", str(stepless), "--stride", "10", "-o", "steps.csv"]) == 0
    steps = pl.read_csv("steps.csv")["step"].to_list()
    assert steps == list(range(10, 10 * ROWS + 1, 10))


def test_tail_reports_steps_at_the_given_stride(stepless: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tail", str(stepless), *TAIL, "--stride", "25"]) == 0
    stop = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert stop["event"] == "stop" and stop["sources"][0]["last_step"] == 25 * ROWS


def test_tail_session_numbers_rows_across_chunks(stepless: Path) -> None:
    """A followed file arrives in pieces; each piece is parsed alone, the steps still run on."""
    lines = stepless.read_bytes().splitlines(keepends=True)
    session = TailSession(str(stepless), [], None, SessionOptions(stride=5))
    session.feed(b"".join(lines[:50]))
    session.feed(b"".join(lines[50:]))
    assert session.last is not None and session.last.step == 5 * ROWS


def test_the_config_file_key_and_the_flag(stepless: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("logdoctor.toml").write_text("stride = 4\n")
    assert main(["analyze", str(stepless), "--format", "json"]) == 0
    assert _structure(capsys)["last_step"] == 4 * ROWS
    assert main(["analyze", str(stepless), "--format", "json", "--stride", "2"]) == 0  # the flag wins
    assert _structure(capsys)["last_step"] == 2 * ROWS


@pytest.mark.parametrize("value", ["0", "-3", "abc", "1.5", "2000000000", ""])
@pytest.mark.parametrize("command", ["analyze", "check", "tail", "parse"])
def test_bad_stride_is_one_line_and_exit_2(
    command: str, value: str, stepless: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = TAIL if command == "tail" else []
    assert main([command, str(stepless), *extra, f"--stride={value}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("logdoctor: error: --stride: expected an integer in [1, "), err


@pytest.mark.parametrize("value", ["0", "'4'", "2.5", "true"])
def test_bad_stride_in_the_config_file(value: str, stepless: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("logdoctor.toml").write_text(f"stride = {value}\n")
    assert main(["analyze", str(stepless)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stride: expected an integer in [1, " in err, err


def test_a_log_that_prints_its_steps_keeps_them(capsys: pytest.CaptureFixture[str]) -> None:
    log = REPO / "fixtures" / "structure" / "clock_resume.jsonl"
    assert main(["analyze", str(log), "--format", "json", "--stride", "7"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["structure"]["stride"], doc["structure"]["stride_source"]) == (10, "steps")
    assert any("--stride 7 not used" in n for n in doc["source"]["notes"])


def test_plot_and_compare_read_the_config_key(stepless: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``stride`` in the file reaches every command that loads a log, not only those with the flag."""
    Path("logdoctor.toml").write_text("stride = 3\n")
    assert main(["plot", str(stepless), "-o", "fig.svg"]) == 0
    assert Path("fig.svg").stat().st_size > 0
    assert main(["compare", str(stepless), str(stepless), "--format", "json"]) == 0
    series = json.loads(capsys.readouterr().out)["baseline"]["series"]
    assert (series["first_step"], series["last_step"]) == (3, 3 * ROWS)
