"""``analyze`` with plain arguments runs without typer (clirun.fast) and answers as the typer app does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from logdoctor import cli, clirun

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = str(REPO / "fixtures" / "example.log")


@pytest.mark.parametrize(("args", "expected"), [
    (["analyze", "a.log"], {"paths": ["a.log"], "fmt": "text", "output": "-"}),
    (["analyze", "-f", "json", "a.log", "b.log", "-o", "-"],
     {"paths": ["a.log", "b.log"], "fmt": "json", "output": "-"}),
    (["analyze", "-", "--format", "html", "--output", "r.html"], {"paths": ["-"], "fmt": "html", "output": "r.html"}),
])
def test_plain_analyze_arguments_are_read(args: list[str], expected: dict[str, object]) -> None:
    assert clirun.fast_args(args) == expected


@pytest.mark.parametrize("args", [
    [], ["analyze"], ["check", "a.log"], ["--version"], ["analyze", "a.log", "--help"], ["analyze", "a.log", "-q"],
    ["analyze", "a.log", "-f"], ["analyze", "a.log", "-f", "json", "-f", "text"], ["analyze", "--format=json", "a.log"],
    ["analyze", "a.log", "-o", "-f"], ["analyze", "--", "a.log"], ["analyze", "a.log", "--executor", "local"],
    ["analyze", "-o", "x"],
])
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


def test_fast_path_imports_no_typer_or_click(tmp_path: Path) -> None:
    code = (
        "import sys; from logdoctor import clirun; "
        f"rc = clirun.fast(['analyze', {EXAMPLE!r}, '-f', 'json', '-o', {str(tmp_path / 'r.json')!r}]); "
        "print(rc, sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click', 'pydantic')))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0 []"
    assert (tmp_path / "r.json").read_bytes().startswith(b"{")
