"""FileFollower: new bytes only, partial lines held, truncation, rotation, from-end, globs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logdoctor.tail import follower as fmod
from logdoctor.tail.follower import FileFollower, expand, watch_dirs


def _append(path: Path, text: str) -> None:
    with path.open("a") as fh:
        fh.write(text)


def test_complete_lines_only_and_partial_line_held(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("step 1 loss=1\nstep 2 lo")
    f = FileFollower(str(log))
    assert f.read().data == b"step 1 loss=1\n"
    assert f.read().data == b""
    _append(log, "ss=2\nstep 3")
    assert f.read().data == b"step 2 loss=2\n"
    _append(log, " loss=3\n")
    assert f.read().data == b"step 3 loss=3\n"
    assert f.offset == log.stat().st_size


def test_reads_only_new_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "a.log"
    log.write_text("x\n" * 1000)
    f = FileFollower(str(log))
    seen: list[tuple[int, int]] = []
    real = os.pread

    def spy(fd: int, n: int, off: int) -> bytes:
        data = real(fd, n, off)
        if n > 64:  # content reads, not the 32-byte truncation check
            seen.append((off, len(data)))
        return data

    monkeypatch.setattr(fmod.os, "pread", spy)
    f.read()
    _append(log, "y\n")
    assert f.read().data == b"y\n"
    monkeypatch.undo()
    assert seen[0] == (0, 2000)
    assert (2000, 2) in seen and all(off >= 2000 for off, _ in seen[1:])


def test_copytruncate_restarts_at_zero(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("step 1 loss=1\nstep 2 loss=2\nstep 3 part")
    f = FileFollower(str(log))
    f.read()
    log.write_text("step 9 loss=9\n")  # truncate + a shorter content
    chunk = f.read()
    assert chunk.restarted == "truncated"
    assert chunk.data == b"step 9 loss=9\n"  # the stale partial line is dropped


def test_truncate_then_regrow_past_offset_is_noticed(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("step 1 loss=1\n")
    f = FileFollower(str(log))
    f.read()
    log.write_text("step 1 loss=5\nstep 2 loss=6\nstep 3 loss=7\n")  # longer than before
    chunk = f.read()
    assert chunk.restarted == "truncated"
    assert chunk.data.startswith(b"step 1 loss=5\n") and chunk.data.endswith(b"step 3 loss=7\n")


def test_rename_and_recreate_finishes_old_file_first(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("step 1 loss=1\n")
    f = FileFollower(str(log))
    assert f.read().data == b"step 1 loss=1\n"
    with log.open("a") as old:
        old.write("step 2 loss=2\nstep 3 lo")
        log.rename(tmp_path / "a.log.1")
        old.write("ss=3\n")  # the writer still holds the old file
    gone = f.read()  # renamed away, no new file yet: the old handle is still read
    assert gone.restarted is None and gone.data == b"step 2 loss=2\nstep 3 loss=3\n"
    with (tmp_path / "a.log.1").open("a") as old:
        old.write("step 3b loss=3\nstep 3c")  # written after the last read, before the switch
    log.write_text("step 4 loss=4\n")
    chunk = f.read()
    assert chunk.restarted == "replaced"
    assert chunk.data == b"step 3b loss=3\nstep 3c\nstep 4 loss=4\n"


def test_from_end_skips_existing_content_and_its_partial_line(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("step 1 loss=1\nstep 2 lo")
    f = FileFollower(str(log), from_end=True)
    assert f.read().data == b""
    _append(log, "ss=2\nstep 3 loss=3\n")
    assert f.read().data == b"step 3 loss=3\n"
    assert f.head().startswith(b"step 1")


def test_waits_for_a_file_that_appears_later_and_reads_it_whole(tmp_path: Path) -> None:
    log = tmp_path / "later.log"
    f = FileFollower(str(log), from_end=True)
    assert f.read().data == b"" and not f.is_open
    log.write_text("step 1 loss=1\n")
    assert f.read().data == b"step 1 loss=1\n"


def test_overlong_partial_line_is_passed_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fmod, "MAX_PARTIAL", 10)
    log = tmp_path / "a.log"
    log.write_text("x" * 25)
    assert FileFollower(str(log)).read().data == b"x" * 25 + b"\n"


def test_expand_globs_and_literals(tmp_path: Path) -> None:
    for r in (1, 0):
        (tmp_path / f"rank{r}.log").write_text("")
    (tmp_path / "other.txt").write_text("")
    missing = str(tmp_path / "later.log")
    got = expand([str(tmp_path / "rank*.log"), missing, str(tmp_path / "rank0.log")])
    assert got == [str(tmp_path / "rank0.log"), str(tmp_path / "rank1.log"), missing]
    dirs = watch_dirs([str(tmp_path / "rank*.log"), missing])
    assert dirs == {str(tmp_path.resolve()): ("later.log", "rank*.log", "rank0.log", "rank1.log")}
