"""Robustness: hostile and odd inputs end in a report or one clear error line, never a traceback."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fixtures.hostile import write_hostile
from logdoctor.cli import main

NAMES = sorted(
    [
        "empty.log",
        "whitespace.log",
        "binary_png.log",
        "binary_checkpoint.pt",
        "no_steps.log",
        "non_utf8.log",
        "crlf.log",
        "mixed_endings.log",
        "one_step.log",
        "two_steps.log",
        "constant_loss.log",
        "all_nan.log",
        "all_inf.log",
        "huge_negative.log",
        "swing_1e308.log",
        "swing_1e308_batch_stats.log",
        "out_of_order.log",
        "duplicated_steps.log",
        "interleaved_ranks.log",
        "truncated_last_line.log",
        "truncated.log.gz",
        "gzipped.log.gz",
        "a_directory",
        "missing.log",
    ]
)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    return write_hostile(tmp_path_factory.mktemp("hostile"))


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def test_case_list_is_complete(hostile: dict[str, tuple[Path, str]]) -> None:
    assert sorted(hostile) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_hostile_input(name: str, hostile: dict[str, tuple[Path, str]], capsys: pytest.CaptureFixture[str]) -> None:
    path, expect = hostile[name]
    before = _digest(path)
    rc = main(["analyze", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert _digest(path) == before, "the input must never be modified"
    if expect == "error":
        assert rc == 2, out
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("logdoctor: error:"), err
    else:
        assert rc == 0, err  # analyze exits 0 with any findings (README "Exit codes")
        assert err == "", "a report comes without warnings on stderr"
        doc = json.loads(out)
        assert doc["series"]["steps"] >= 1


def test_all_nan_is_reported_as_nonfinite(
    hostile: dict[str, tuple[Path, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    main(["analyze", str(hostile["all_nan.log"][0]), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["series"]["nonfinite_loss_steps"] == 200


def test_duplicates_and_out_of_order_are_counted(
    hostile: dict[str, tuple[Path, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    main(["analyze", str(hostile["duplicated_steps.log"][0]), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["series"]["steps"] == 200 and doc["series"]["duplicate_steps"] == 200
    main(["analyze", str(hostile["out_of_order.log"][0]), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["series"]["steps"] == 200


def _run(args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run(
        [sys.executable, "-m", "logdoctor", *args], input=stdin, capture_output=True, env=env, timeout=60
    )


def test_stdin(hostile: dict[str, tuple[Path, str]]) -> None:
    data = hostile["crlf.log"][0].read_bytes()
    proc = _run(["analyze", "-", "--format", "json"], stdin=data)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["series"]["steps"] == 300


def test_empty_stdin_is_one_line_error() -> None:
    proc = _run(["analyze", "-"], stdin=b"")
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo(tmp_path: Path, hostile: dict[str, tuple[Path, str]]) -> None:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    data = hostile["crlf.log"][0].read_bytes()

    def writer() -> None:
        with fifo.open("wb") as fh:
            fh.write(data)

    t = threading.Thread(target=writer)
    t.start()
    proc = _run(["analyze", str(fifo), "--format", "json"])
    t.join(timeout=10)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["series"]["steps"] == 300


def test_broken_pipe_has_no_traceback(tmp_path: Path, hostile: dict[str, tuple[Path, str]]) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    cmd = f"{sys.executable} -m logdoctor analyze {hostile['crlf.log'][0]} --format json | head -c 10"
    proc = subprocess.run(cmd, shell=True, capture_output=True, env=env, timeout=60)
    assert b"Traceback" not in proc.stderr and b"BrokenPipe" not in proc.stderr


def test_file_growing_while_read(tmp_path: Path) -> None:
    log = tmp_path / "growing.log"
    lines = [f"step {i} | loss={2 + 1 / i:.4f}\n" for i in range(1, 20001)]
    log.write_text("".join(lines[:10000]))
    stop = threading.Event()

    def writer() -> None:
        with log.open("a") as fh:
            for line in lines[10000:]:
                if stop.is_set():
                    return
                fh.write(line)
                fh.flush()
                time.sleep(0.00001)

    t = threading.Thread(target=writer)
    t.start()
    try:
        proc = _run(["analyze", str(log), "--format", "json"])
    finally:
        stop.set()
        t.join(timeout=10)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["series"]["steps"] >= 10000


def test_unreadable_file_is_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logdoctor.errors import InputError
    from logdoctor.ingest.sources import open_source

    log = tmp_path / "secret.log"
    log.write_text("step 1 | loss=1.0\n")

    def deny(self: Path, *a: object, **k: object) -> object:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "open", deny)
    with pytest.raises(InputError, match="Permission denied"):
        open_source(str(log))


@pytest.mark.slow
def test_50mb_single_line(tmp_path: Path) -> None:
    path, _ = write_hostile(tmp_path, large=True)["single_line_50mb.log"]
    proc = _run(["analyze", str(path)])
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
