"""The CLI's fast coercion gives typer's values (and typer's errors) without importing pydantic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: a typer app with the parameter shapes logdoctor's commands use; prints what the command received
APP = '''
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
try:
    app(sys.argv[2:], standalone_mode=False)
except Exception as err:
    print(json.dumps({"error": type(err).__name__ + ": " + str(err)}))
'''

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


def _run(mode: str, argv: list[str]) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", APP, mode, *argv], capture_output=True, text=True, env=env, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("argv", ARGVS, ids=[" ".join(a) for a in ARGVS])
def test_fast_coercion_equals_typers(argv: list[str]) -> None:
    fast, slow = _run("fast", argv), _run("typer", argv)
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
