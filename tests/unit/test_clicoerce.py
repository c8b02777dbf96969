"""The CLI's fast coercion gives typer's values (and typer's errors) without importing pydantic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: a typer app with the parameter shapes logdoctor's commands use; prints what the command received
APP = """
import json, sys
from typing import Annotated
import typer
if sys.argv[1] == "fast":
    from logdoctor import clicoerce
    assert clicoerce.install()
app = typer.Typer()
@app.command()
def cmd(
    paths: Annotated[list[str], typer.Argument()],
    fmt: Annotated[str, typer.Option("--format")] = "text",
    spe: Annotated[int | None, typer.Option("--spe", min=1)] = None,
    cap: Annotated[int, typer.Option("--cap", min=2, max=9)] = 3,
    verbose: Annotated[int, typer.Option("-v", count=True)] = 0,
    quiet: Annotated[bool, typer.Option("--quiet")] = False,
    sel: Annotated[list[str] | None, typer.Option("--select")] = None,
    conf: Annotated[str | None, typer.Option("--config")] = None,
    rate: Annotated[float | None, typer.Option("--rate")] = None,
) -> None:
    got = [paths, fmt, spe, cap, verbose, quiet, sel, conf, rate]
    print(json.dumps({"values": got, "types": [type(v).__name__ for v in got], "pydantic": "pydantic" in sys.modules}))
for argv in json.loads(sys.argv[2]):  # one process per mode, each command line in turn
    try:
        app(argv, standalone_mode=False)
    except Exception as err:
        print(json.dumps({"error": type(err).__name__ + ": " + str(err)}))
"""

ARGVS = [
    ["a.log"],
    ["a.log", "b.log", "--format", "json", "--spe", "40", "--cap", "9", "-v", "-v", "--quiet"],
    ["a.log", "--select", "LD1,LD2", "--select", "spikes", "--config", "x.toml", "--rate", "0.5"],
    ["a.log", "--spe", "0"],
    ["a.log", "--spe", "abc"],
    ["a.log", "--spe", "007"],
    ["a.log", "--cap", "10"],
    ["a.log", "--spe", "-3"],
    ["a.log", "--spe", "\u00b2"],
    ["a.log", "--format", ""],
]


def _run_all(mode: str, argvs: list[list[str]]) -> list[dict[str, object]]:
    """What the command received (or the error) for each command line, all in one fresh process."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", APP, mode, json.dumps(argvs)], capture_output=True, text=True, env=env, check=True
    )
    got = [dict(json.loads(line)) for line in out.stdout.strip().splitlines() if line.startswith("{")]
    assert len(got) == len(argvs), out.stdout
    return got


def _run(mode: str, argv: list[str]) -> dict[str, object]:
    return _run_all(mode, [argv])[0]


@cache
def _both() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    return _run_all("fast", ARGVS), _run_all("typer", ARGVS)


@pytest.mark.parametrize("k", range(len(ARGVS)), ids=[" ".join(a) for a in ARGVS])
def test_fast_coercion_equals_typers(k: int) -> None:
    fast, slow = (dict(d) for d in (_both()[0][k], _both()[1][k]))
    fast.pop("pydantic", None)
    slow.pop("pydantic", None)
    assert fast == slow


def test_plain_values_need_no_pydantic() -> None:
    for argv in (ARGVS[0], ARGVS[1], ARGVS[5]):
        assert _run("fast", argv)["pydantic"] is False, argv
    assert _run("typer", ARGVS[1])["pydantic"] is True  # control: typer alone imports it


def test_the_cli_analyses_without_pydantic(tmp_path: Path) -> None:
    code = (
        "import sys; from logdoctor.cli import main;"
        f"main(['analyze', {str(REPO / 'fixtures' / 'example.log')!r}, '-o', {str(tmp_path / 'out')!r}, '-v']);"
        "print('pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
