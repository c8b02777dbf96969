"""The JSON report is the same bytes whatever the interpreter's hash seed (gold files, CI diffs)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import FIXTURES, REPO


def _json(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
    logs = [str(FIXTURES / name) for name in ("formats/fairseq.log", "example.log", "formats/hf_trainer_state.json")]
    proc = subprocess.run(
        [sys.executable, "-m", "logdoctor", "analyze", *logs, "-f", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def test_json_report_does_not_depend_on_the_hash_seed() -> None:
    # fairseq's renamed keys (wps, bsz, loss ...) and its skip reasons came out in set order
    assert _json("1") == _json("2") == _json("3")
