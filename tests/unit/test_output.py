"""The output helper: atomic files, parent folders, no binary on a terminal, one-line errors."""

from __future__ import annotations

import io
import sys
from pathlib import Path

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
