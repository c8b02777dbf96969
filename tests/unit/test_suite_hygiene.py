"""The suite writes only into its own temporary folders: no test or benchmark names a device node.

Run as root, ``-o /dev/null`` once replaced the machine's /dev/null with a regular file. The writer
now writes devices in place, and this check keeps the suite from relying on that: no string literal
in tests/ or bench/ starts with ``/dev/`` and nothing passes ``os.devnull``. (conftest.py checks at
the end of every run that /dev/null, /dev/full and /dev/zero are still the devices they were.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted([*REPO.glob("tests/**/*.py"), *REPO.glob("bench/**/*.py"), *REPO.glob("fixtures/**/*.py")])
#: the files that name the machine's device nodes on purpose, and why
ALLOWED = {
    "tests/conftest.py",  # reads their identity (os.stat) at the start and the end of a run
    "tests/unit/test_suite_hygiene.py",  # this check and its control
}


def _device_uses(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("/dev/"):
            found.append(f"line {node.lineno}: {node.value!r}")
        if isinstance(node, ast.Attribute) and node.attr == "devnull":
            found.append(f"line {node.lineno}: os.devnull")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(REPO)) for p in SOURCES])
def test_no_test_or_benchmark_names_a_device(path: Path) -> None:
    if str(path.relative_to(REPO)) in ALLOWED:
        return
    assert _device_uses(path.read_text(encoding="utf-8")) == []


def test_the_check_sees_a_device_name() -> None:
    """Control: both spellings are caught."""
    code = "import os\nrun(['-o', '/dev/null'])\nrun(['-o', os.devnull])\n"
    assert _device_uses(code) == ["line 2: '/dev/null'", "line 3: os.devnull"]


def _own_reallogs_paths(source: str) -> bool:
    """Whether a test builds its own path to the shared real logs (``.../"shared"/"reallogs"``)."""
    return '"shared" / "reallogs"' in source or "'shared' / 'reallogs'" in source


TESTS = sorted(REPO.glob("tests/**/*.py"))


@pytest.mark.parametrize("path", TESTS, ids=[str(p.relative_to(REPO)) for p in TESTS])
def test_tests_find_the_shared_real_logs_through_conftest(path: Path) -> None:
    # conftest's REALLOGS honours $LOGDOCTOR_REALLOGS and its reallogs_dir fixture fails instead of
    # skipping under CI's $LOGDOCTOR_REQUIRE_REALLOGS; a test's own path would do neither
    if path.relative_to(REPO).as_posix() not in ("tests/conftest.py", "tests/unit/test_suite_hygiene.py"):
        assert not _own_reallogs_paths(path.read_text()), "use tests.conftest.REALLOGS or the reallogs_dir fixture"


def test_the_reallogs_check_sees_an_own_path() -> None:
    assert _own_reallogs_paths('REALLOGS = ROOT.parent / "shared" / "reallogs"')
