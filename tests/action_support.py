"""Run action.yml's own ``run:`` scripts as the Actions runner does, for the workflow tests.

Each step's ``env:`` is evaluated from the given inputs (``${{ inputs.NAME }}``, the input's
default when not given) and ``${{ github.action_path }}``; the script runs with
``bash --noprofile --norc -eo pipefail FILE`` (the runner's ``shell: bash``), with real
``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY`` files. ``logdoctor`` and ``python`` on the PATH are
this interpreter with this checkout; the install step gets a ``python`` that records its
arguments instead of installing (the tests check what would be installed, offline).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class StepRun:
    """What one step did: exit code, stdout, stderr, and the outputs and summary files' text."""

    code: int
    out: str
    err: str
    outputs: dict[str, str]
    summary: str


def action() -> dict[str, Any]:
    """action.yml, parsed."""
    yaml = pytest.importorskip("yaml")
    doc: dict[str, Any] = yaml.safe_load((REPO / "action.yml").read_text())
    return doc


def step(name: str) -> dict[str, Any]:
    """The step called ``name``."""
    return next(s for s in action()["runs"]["steps"] if s.get("name") == name)


def _env(st: dict[str, Any], inputs: dict[str, str], action_path: Path) -> dict[str, str]:
    defaults = {k: str(v.get("default", "")) for k, v in action()["inputs"].items()}
    given = {**defaults, **inputs}

    def value(m: re.Match[str]) -> str:
        expr = m.group(1).strip()
        if expr == "github.action_path":
            return str(action_path)
        assert expr.startswith("inputs."), expr
        return given[expr.removeprefix("inputs.")]

    return {k: re.sub(r"\$\{\{(.*?)\}\}", value, str(v)) for k, v in st.get("env", {}).items()}


def _tool(folder: Path, name: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def run_step(name: str, inputs: dict[str, str], work: Path, *, action_path: Path = REPO) -> StepRun:
    """Run the step ``name`` of action.yml in ``work`` with ``inputs``."""
    st = step(name)
    bin_dir = work.parent / f"{work.name}-bin"
    if name == "Install logdoctor":  # record what pip would be asked to install
        _tool(bin_dir, "python", f'for a in "$@"; do printf "%s\\0" "$a"; done > "{bin_dir}/pip-args"')
    else:
        _tool(bin_dir, "python", f'exec "{sys.executable}" "$@"')
        _tool(bin_dir, "logdoctor", f'exec "{sys.executable}" -m logdoctor "$@"')
    script = work.parent / f"{work.name}-step.sh"
    script.write_text(st["run"])
    outputs, summary = work.parent / f"{work.name}-output", work.parent / f"{work.name}-summary.md"
    outputs.write_text("")
    summary.write_text("")
    env = {
        **os.environ,
        **_env(st, inputs, action_path),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    pairs = (line.split("=", 1) for line in outputs.read_text().splitlines() if "=" in line)
    return StepRun(done.returncode, done.stdout, done.stderr, dict(pairs), summary.read_text())


def pip_args(work: Path) -> list[str]:
    """The arguments the install step gave ``python``."""
    return (work.parent / f"{work.name}-bin" / "pip-args").read_text().split("\0")[:-1]
