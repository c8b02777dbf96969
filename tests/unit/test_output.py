"""The output helper: atomic files, parent folders, no binary on a terminal, one-line errors."""

from __future__ import annotations

import errno
import io
import os
import stat
import sys
from pathlib import Path
from typing import BinaryIO

import pytest

from logdoctor.errors import OutputError
from logdoctor.renderers.output import write_output


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_binary_refused_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", _Tty())
    with pytest.raises(OutputError, match="refusing to write binary output to a terminal"):
        write_output(b"\x89PNG", "-")


def test_parent_created_and_no_temp_left(tmp_path: Path) -> None:
    dest = tmp_path / "a" / "b" / "report.md"
    write_output("hello\n", str(dest))
    assert dest.read_text() == "hello\n"
    assert [p.name for p in dest.parent.iterdir()] == ["report.md"]


def test_unwritable_location_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    with pytest.raises(OutputError) as err:
        write_output("data", str(blocker / "out.json"))
    assert str(err.value).startswith(f"{blocker / 'out.json'}: cannot write (")
    assert "\n" not in str(err.value)


def test_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    dest = tmp_path / "r.txt"
    dest.write_text("old")
    dest.chmod(0o640)
    write_output("new", str(dest))
    assert dest.read_text() == "new" and dest.stat().st_mode & 0o777 == 0o640


def test_a_writer_streams_into_the_file_and_fails_without_a_partial_file(tmp_path: Path) -> None:
    dest = tmp_path / "t.bin"
    write_output(lambda fh: fh.write(b"abc"), str(dest))
    assert dest.read_bytes() == b"abc"

    def fails(fh: BinaryIO) -> None:
        fh.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OutputError, match=r"t2.bin: cannot write \(No space left on device\)"):
        write_output(fails, str(tmp_path / "t2.bin"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.bin"]


def test_a_writer_to_stdout_is_written_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out))
    write_output(lambda fh: fh.write(b"PAR1"), "-")
    assert out.getvalue() == b"PAR1"


def test_parquet_write_failures_are_the_os_errors_they_are(tmp_path: Path) -> None:
    """polars reports a full disk or closed pipe as its own ComputeError: the table writer gives the
    OSError back, so that ``parse -o`` prints one line (and a closed pipe is a BrokenPipeError)."""
    import polars as pl

    from logdoctor.renderers.tables import _parquet_writer

    write = _parquet_writer(pl.DataFrame({"a": range(200_000)}))
    full = tmp_path / "full"  # a full-like device of the test's own, never the machine's /dev/full
    try:
        os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        with open(full, "wb") as fh, pytest.raises(OSError) as err:
            write(fh)
        assert err.value.errno == errno.ENOSPC
    except PermissionError:
        pass  # no device nodes here: the closed pipe below still runs
    read, written = os.pipe()
    os.close(read)
    with os.fdopen(written, "wb") as fh, pytest.raises(BrokenPipeError):
        write(fh)
