"""The GitHub Action can gate on a comparison with a baseline log (optional `baseline` input)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.action_support import REPO, action, run_step, step


def test_the_action_runs_compare_only_with_a_baseline() -> None:
    assert action()["inputs"]["baseline"]["default"] == ""
    script = step("Check training logs")["run"]
    assert 'if [ -n "$LD_BASELINE" ]' in script
    assert 'compare "$LD_BASELINE" "${runs[@]}" --fail-on-regression' in script


@pytest.mark.parametrize(
    ("baseline", "paths", "code"),
    [
        ("fixtures/compare_static.log", "fixtures/compare_bucketed.jsonl", 0),  # the fix: passes
        ("fixtures/compare_bucketed.jsonl", "fixtures/compare_static.log", 1),  # the fault back: fails
    ],
)
def test_the_action_script_gates_on_the_comparison(tmp_path: Path, baseline: str, paths: str, code: int) -> None:
    work = tmp_path / "work"
    work.mkdir()
    inputs = {
        "paths": str(REPO / paths),
        "fail-on": "error",
        "args": "--ignore\nLD502",
        "baseline": str(REPO / baseline),
    }
    done = run_step("Check training logs", inputs, work)
    assert done.code == code, done.err
    assert done.outputs == {"exit-code": str(code)}
    assert "## logdoctor compare" in done.summary
