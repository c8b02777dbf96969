"""The CLI starts fast: importing it loads no polars, numpy, scipy or matplotlib."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from logdoctor.cli import FORMAT_NAMES
from logdoctor.renderers import RENDERERS

REPO = Path(__file__).resolve().parents[2]


def test_format_names_in_help_match_the_registry() -> None:
    assert tuple(RENDERERS) == FORMAT_NAMES


def test_importing_the_cli_loads_no_heavy_module() -> None:
    code = (
        "import sys, logdoctor.cli; "
        "print(sorted(m for m in ('polars', 'numpy', 'scipy', 'matplotlib', 'ruptures') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_run_builds_only_the_command_it_names() -> None:
    """typer builds the click parameters of every registered command on each run: main() hands it
    the named command alone, and the whole app when no known command comes first."""
    from logdoctor import cli

    names = [c.callback.__name__ for c in cli.app.registered_commands if c.callback]
    assert {"analyze", "parse", "tail"} <= set(names)
    one = cli._command_app(["parse", "x.log", "-o", "t.csv"])
    assert [c.callback.__name__ for c in one.registered_commands if c.callback] == ["parse"]
    assert len(cli.app.registered_commands) == len(names)  # the app itself is left whole
    for args in ([], ["--version"], ["nosuch"], ["--help"]):
        assert cli._command_app(args) is cli.app


def test_help_and_errors_are_the_whole_apps() -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "logdoctor", *args], cwd=REPO, capture_output=True, text=True)

    assert "parse" in run("--help").stdout and "analyze" in run("--help").stdout
    bad = run("nosuch")
    assert bad.returncode == 2 and "No such command 'nosuch'" in bad.stderr
    sub = run("parse", "--help")
    assert sub.returncode == 0 and sub.stdout.startswith("Usage: logdoctor parse [OPTIONS]")
