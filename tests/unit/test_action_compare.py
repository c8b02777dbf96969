"""The GitHub Action can gate on a comparison with a baseline log (optional `baseline` input)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _script() -> str:
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["inputs"]["baseline"]["default"] == ""
    return str(action["runs"]["steps"][-1]["run"])


def test_the_action_runs_compare_only_with_a_baseline() -> None:
    script = _script()
    assert 'if [ -n "$LD_BASELINE" ]' in script
    assert 'compare "$LD_BASELINE" "${paths[@]}" --fail-on-regression' in script


@pytest.mark.parametrize(("baseline", "paths", "code"), [
    ("fixtures/compare_static.log", "fixtures/compare_bucketed.jsonl", 0),  # the fix: passes
    ("fixtures/compare_bucketed.jsonl", "fixtures/compare_static.log", 1),  # the fault back: fails
])
def test_the_action_script_gates_on_the_comparison(tmp_path: Path, baseline: str, paths: str, code: int) -> None:
    script = _script().replace("logdoctor ", f"{sys.executable} -m logdoctor ")
    env = dict(os.environ, LD_PATHS=str(REPO / paths), LD_FAIL_ON="error", LD_ARGS="--ignore LD502",
               LD_BASELINE=str(REPO / baseline), GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
               GITHUB_OUTPUT=str(tmp_path / "out"), PYTHONPATH=str(REPO))
    done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == code, done.stderr
    assert (tmp_path / "out").read_text() == f"exit-code={code}\n"
    assert "## logdoctor compare" in (tmp_path / "summary.md").read_text()
