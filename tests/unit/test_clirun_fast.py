"""``analyze`` and ``check`` with plain arguments run without typer (clirun.fast) and answer as the typer
app does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from logdoctor import cli, clirun

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = str(REPO / "fixtures" / "example.log")
HEALTHY = str(REPO / "fixtures" / "emit_bucketed.log")  # no finding at warning or above


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["analyze", "a.log"], {"paths": ["a.log"], "fmt": "text", "output": "-"}),
        (
            ["analyze", "-f", "json", "a.log", "b.log", "-o", "-"],
            {"paths": ["a.log", "b.log"], "fmt": "json", "output": "-"},
        ),
        (
            ["analyze", "-", "--format", "html", "--output", "r.html"],
            {"paths": ["-"], "fmt": "html", "output": "r.html"},
        ),
        (["check", "a.log", "-f", "json"], {"paths": ["a.log"], "fmt": "json", "output": "-"}),
    ],
)
def test_plain_analyze_arguments_are_read(args: list[str], expected: dict[str, object]) -> None:
    assert clirun.fast_args(args) == expected


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["analyze"],
        ["check"],
        ["check", "a.log", "--fail-on", "error"],
        ["check", "a.log", "--exit-zero"],
        ["tail", "a.log"],
        ["--version"],
        ["analyze", "a.log", "--help"],
        ["analyze", "a.log", "-q"],
        ["analyze", "a.log", "-f"],
        ["analyze", "a.log", "-f", "json", "-f", "text"],
        ["analyze", "--format=json", "a.log"],
        ["analyze", "a.log", "-o", "-f"],
        ["analyze", "--", "a.log"],
        ["analyze", "a.log", "--executor", "local"],
        ["analyze", "-o", "x"],
    ],
)
def test_anything_else_is_left_to_typer(args: list[str]) -> None:
    assert clirun.fast_args(args) is None


def test_fast_path_output_and_exit_code_equal_the_typer_apps(tmp_path: Path) -> None:
    missing = str(tmp_path / "nosuch.log")
    for fmt in ("text", "json"):
        fast, slow = tmp_path / f"fast.{fmt}", tmp_path / f"slow.{fmt}"
        args = ["analyze", EXAMPLE, missing, "-f", fmt]
        code = cli.main([*args, "-o", str(fast)])
        res = CliRunner().invoke(cli.app, [*args, "-o", str(slow)], standalone_mode=False)
        assert (code, fast.read_bytes()) == (res.return_value, slow.read_bytes())
        assert code == 2 and fast.read_bytes()


@pytest.mark.parametrize("logs", [[EXAMPLE], [HEALTHY], [HEALTHY, "nosuch.log"]])
def test_fast_check_output_and_exit_code_equal_the_typer_apps(tmp_path: Path, logs: list[str]) -> None:
    codes = set()
    for fmt in ("text", "json"):
        fast, slow = tmp_path / f"fast.{fmt}", tmp_path / f"slow.{fmt}"
        args = ["check", *(str(tmp_path / p) if p == "nosuch.log" else p for p in logs), "-f", fmt]
        code = cli.main([*args, "-o", str(fast)])
        res = CliRunner().invoke(cli.app, [*args, "-o", str(slow)], standalone_mode=False)
        assert (code, fast.read_bytes()) == (res.return_value, slow.read_bytes())
        codes.add(code)
    assert len(codes) == 1


def test_fast_check_gates_as_check_does(tmp_path: Path) -> None:
    out = str(tmp_path / "r.txt")
    assert cli.main(["check", EXAMPLE, "-o", out]) == 1  # a warning: the default --fail-on
    assert cli.main(["check", HEALTHY, "-o", out]) == 0
    assert cli.main(["check", str(tmp_path / "nosuch.log"), "-o", out]) == 2


def test_fast_path_imports_no_typer_or_click(tmp_path: Path) -> None:
    code = (
        "import sys; from logdoctor import clirun; "
        f"rc = clirun.fast(['analyze', {EXAMPLE!r}, '-f', 'json', '-o', {str(tmp_path / 'r.json')!r}]); "
        "print(rc, sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click', 'pydantic')))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0 []"
    assert (tmp_path / "r.json").read_bytes().startswith(b"{")
