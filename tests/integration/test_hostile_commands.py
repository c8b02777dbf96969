"""Robustness of every command and of outputs: hostile inputs and hostile destinations end in a
report or one clear error line (exit 2), never a traceback, a partial file or a write to an input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.hostile import write_hostile
from logdoctor.cli import main
from logdoctor.renderers import output

REPO = Path(__file__).resolve().parents[2]
CANONICAL = REPO / "fixtures" / "formats" / "canonical.log"
#: Hostile inputs worth drawing or exporting (thin, degenerate or extreme data) and bad ones.
DEGENERATE = [
    "one_step.log",
    "two_steps.log",
    "constant_loss.log",
    "all_nan.log",
    "all_inf.log",
    "huge_negative.log",
    "swing_1e308.log",
    "swing_1e308_batch_stats.log",
    "interleaved_ranks.log",
    "empty.log",
    "binary_png.log",
    "truncated.log.gz",
    "a_directory",
    "missing.log",
]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    return write_hostile(tmp_path_factory.mktemp("hostile"))


def _one_line_error(rc: int, err: str) -> None:
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("logdoctor: error:"), err


def _report_or_error(rc: int, out: str, err: str, expect: str) -> None:
    assert "Traceback" not in out + err
    if expect == "error":
        _one_line_error(rc, err)
    else:
        assert rc in (0, 1), err


@pytest.mark.parametrize("name", sorted(set(DEGENERATE) | {"crlf.log", "no_steps.log", "non_utf8.log"}))
def test_check_and_parse_on_hostile_input(
    name: str, hostile: dict[str, tuple[Path, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, expect = hostile[name]
    rc = main(["check", str(path), "--format", "json"])
    _report_or_error(rc, *capsys.readouterr(), expect)
    table = tmp_path / "steps.csv"
    rc = main(["parse", str(path), "-o", str(table)])
    _report_or_error(rc, *capsys.readouterr(), expect)
    assert table.is_file() == (expect == "report")
    assert [p.name for p in tmp_path.iterdir()] == (["steps.csv"] if expect == "report" else [])


@pytest.mark.slow
@pytest.mark.parametrize("name", DEGENERATE)
def test_plot_on_hostile_input(
    name: str, hostile: dict[str, tuple[Path, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, expect = hostile[name]
    fig = tmp_path / "fig.png"
    rc = main(["plot", str(path), "-o", str(fig)])
    _report_or_error(rc, *capsys.readouterr(), expect)
    assert fig.is_file() == (expect == "report")
    if fig.is_file():
        assert fig.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "content",
    [b"", b"   \n\n", b"\x89PNG\r\n\x1a\n\x00\x00\xff", b"abc\ndef\n", b"-5\n-7\n", b"nan\ninf\n", b"0\n0\n"],
    ids=["empty", "blank", "binary", "words", "negative", "nonfinite", "zeros"],
)
def test_buckets_on_hostile_lengths(content: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lengths = tmp_path / "lengths.txt"
    lengths.write_bytes(content)
    rc = main(["buckets", str(lengths), "--token-budget", "4096"])
    _one_line_error(rc, capsys.readouterr().err)  # none of these holds a usable sequence length
    assert lengths.read_bytes() == content


def test_report_and_plot_into_missing_directories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "a" / "b" / "report.json"
    fig = tmp_path / "c" / "fig.svg"
    rc = main(["analyze", str(CANONICAL), "--format", "json", "-o", str(report), "--plot", str(fig)])
    assert rc == 0, capsys.readouterr().err
    assert report.read_text().startswith("{") and fig.read_text().lstrip().startswith("<?xml")


@pytest.mark.parametrize("where", ["proc", "file-as-dir"])
@pytest.mark.parametrize("option", ["-o", "--plot"])
def test_unwritable_destination_is_one_line(
    where: str, option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    parent = Path("/proc/logdoctor-no-such-dir") if where == "proc" else blocker
    dest = parent / ("out.json" if option == "-o" else "fig.png")
    rc = main(["analyze", str(CANONICAL), "--format", "json", option, str(dest)])
    _one_line_error(rc, capsys.readouterr().err)
    assert blocker.read_text() == "x"


@pytest.mark.parametrize("option", ["-o", "--plot"])
def test_output_equal_to_input_is_refused(option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "run.svg"  # a log whose name is also a plot name
    log.write_bytes(CANONICAL.read_bytes())
    rc = main(["analyze", str(log), option, str(log)])
    _one_line_error(rc, capsys.readouterr().err)
    assert log.read_bytes() == CANONICAL.read_bytes()


def test_parse_refuses_to_overwrite_its_csv_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = REPO / "fixtures" / "formats" / "csv_lightning_metrics.csv"
    log = tmp_path / "metrics.csv"
    log.write_bytes(src.read_bytes())
    _one_line_error(main(["parse", str(log), "-o", str(log)]), capsys.readouterr().err)
    assert log.read_bytes() == src.read_bytes()


def test_failed_write_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "report.json"
    dest.write_text("previous report")
    real_fdopen = os.fdopen

    class _DiskFull:
        def __init__(self, fh: object) -> None:
            self.fh = fh

        def __enter__(self) -> _DiskFull:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()  # type: ignore[attr-defined]

        def write(self, data: bytes) -> int:
            self.fh.write(data[: len(data) // 2])  # type: ignore[attr-defined]
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(output.os, "fdopen", lambda fd, mode: _DiskFull(real_fdopen(fd, mode)))
    rc = main(["analyze", str(CANONICAL), "--format", "json", "-o", str(dest)])
    _one_line_error(rc, capsys.readouterr().err)
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
    assert dest.read_text() == "previous report"


def _cli(args: str, *, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("FORCE_COLOR", None)
    cmd = f"{sys.executable} -m logdoctor {args}"
    return subprocess.run(cmd, shell=True, input=stdin, capture_output=True, env=env, timeout=60)


def test_output_to_a_pipe_has_no_terminal_codes() -> None:
    proc = _cli(f"analyze {CANONICAL} -v")
    assert proc.returncode == 0, proc.stderr
    assert b"\x1b[" not in proc.stdout and b"steps" in proc.stdout


def test_long_output_into_head_is_quiet(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    log.write_text("".join(f"step {i} | loss={2 + 1 / i:.5f}\n" for i in range(1, 60_001)))
    proc = _cli(f"parse {log} --table-format csv | head -n 2")
    assert b"Traceback" not in proc.stderr and b"Broken" not in proc.stderr, proc.stderr
    assert proc.stdout.count(b"\n") == 2


def test_unreadable_file_through_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "secret.log"
    log.write_bytes(CANONICAL.read_bytes())
    if os.geteuid() != 0:
        log.chmod(0)
    else:  # root reads anything: deny the open instead
        real_open = Path.open

        def deny(self: Path, *args: object, **kwargs: object) -> object:
            if self == log:
                raise PermissionError(13, "Permission denied", str(self))
            return real_open(self, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(Path, "open", deny)
    _one_line_error(main(["analyze", str(log)]), capsys.readouterr().err)


@pytest.mark.parametrize(
    ("name", "expect"),
    [
        ("empty.log", "report"),
        ("binary_png.log", "error"),
        ("one_step.log", "report"),
        ("all_nan.log", "report"),
        ("truncated.log.gz", "error"),
        ("a_directory", "error"),
        ("missing.log", "report"),
        ("interleaved_ranks.log", "report"),
        ("non_utf8.log", "report"),
        ("mixed_endings.log", "report"),
    ],
)
def test_tail_on_hostile_input(
    name: str, expect: str, hostile: dict[str, tuple[Path, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = hostile[name]
    rc = main(
        [
            "tail",
            str(path),
            "--format",
            "jsonl",
            "--idle-timeout",
            "0.3",
            "--poll-interval",
            "0.05",
            "--heartbeat",
            "100",
        ]
    )
    out, err = capsys.readouterr()
    _report_or_error(rc, out, err, expect)
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert events, "tail closes its event stream even on an error"
