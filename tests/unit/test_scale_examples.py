"""bench/scale_dask.py: one line and exit 0 without dask; with dask, the cluster's documents equal a loop's."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "scale_dask.py"


def test_without_dask_it_says_so_in_one_line_and_exits_0() -> None:
    hide = (
        "import runpy, sys; sys.modules['dask'] = None; sys.modules['dask.distributed'] = None; "
        f"sys.argv = [{str(SCRIPT)!r}]; runpy.run_path({str(SCRIPT)!r}, run_name='__main__')"
    )
    res = subprocess.run([sys.executable, "-c", hide], capture_output=True, text=True, cwd=REPO, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("\n") == 1 and "dask is not installed" in res.stdout
    assert res.stderr == ""


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="dask[distributed] not installed")
def test_one_task_per_run_gives_the_documents_of_an_in_process_loop() -> None:
    logs = [str(REPO / "fixtures" / "example.log"), str(REPO / "fixtures" / "spiky.log"), str(REPO / "nope.log")]
    res = subprocess.run(
        [sys.executable, str(SCRIPT), *logs, "--workers", "1", "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
        timeout=300,
    )
    line = json.loads(res.stdout.strip().splitlines()[-1])
    assert line["workers"] == 1 and line["files"] == 3
    assert line["same_reports_as_serial"] is True
    assert line["peak_rss_mb_per_worker"] > 50
