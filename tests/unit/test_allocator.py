"""logdoctor.allocator: glibc keeps the memory a batch command frees; tail and library callers do not ask."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import pytest

from logdoctor import __main__ as entry
from logdoctor import allocator

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="glibc's mallopt")
def test_glibc_agrees_to_keep_freed_memory() -> None:
    assert allocator.keep_freed_memory() is True


def test_another_system_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocator.sys, "platform", "darwin")
    assert allocator.keep_freed_memory() is False


@pytest.mark.parametrize(
    ("argv", "asks"),
    [
        (["analyze", "run.log"], True),
        (["--no-color", "check", "run.log"], True),
        (["tail", "run.log"], False),  # a follower's memory would stay at its heavy passes' peak
        (["-q", "tail", "run.log"], False),
    ],
)
def test_every_command_but_tail_asks(monkeypatch: pytest.MonkeyPatch, argv: list[str], asks: bool) -> None:
    asked: list[bool] = []
    monkeypatch.setattr(allocator, "keep_freed_memory", lambda: asked.append(True) or True)
    monkeypatch.setattr(sys, "argv", ["logdoctor", *argv])
    monkeypatch.setattr("logdoctor.clirun.fast", lambda _argv: 0)  # stop before the command runs
    monkeypatch.setattr("logdoctor.startup.begin", lambda: None)
    assert entry.main() == 0
    assert asked == ([True] if asks else [])


def test_only_the_command_line_entry_asks() -> None:
    """A library caller (pipeline, cli.main in a test or a notebook) keeps its process's allocator."""
    package = Path(allocator.__file__).parent
    users = sorted(
        p.relative_to(package).as_posix()
        for p in package.rglob("*.py")
        if p.name != "allocator.py" and "allocator" in p.read_text(encoding="utf-8")
    )
    assert users == ["__main__.py"]
