"""The parent side of every benchmark: the best of several fresh runs of a command.

Each run goes through bench/child.py --rusage, a fresh intermediate process, so that the peak RSS and
CPU seconds are the measured command's own (``RUSAGE_CHILDREN``). "Best" is the fastest by the stage's
own wall clock when the command reports one (``stage_wall``), else by the process wall.
"""

from __future__ import annotations

import atexit
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = str(Path(__file__).resolve().parent / "child.py")
_SINK_DIR: list[Path] = []


def sink() -> str:
    """A scratch output file for measured commands' ``-o`` (never a device node: written by rename, a
    device would be replaced with a file), in a folder removed when the benchmark exits."""
    if not _SINK_DIR:
        _SINK_DIR.append(Path(tempfile.mkdtemp(prefix="logdoctor-bench-")))
        atexit.register(shutil.rmtree, _SINK_DIR[0], True)
    return str(_SINK_DIR[0] / "out")


def best_of(cmd: list[str], repeat: int, cwd: Path | None = None) -> dict[str, float]:
    """Best of ``repeat`` fresh runs of ``cmd``: wall, cpu, rss_mb (and stage_* for stages).

    Raises:
        RuntimeError: the command failed (its exit code).
    """
    best: dict[str, float] = {}
    for _ in range(repeat):
        res = subprocess.run(
            [sys.executable, CHILD, "--rusage", "--", *cmd], capture_output=True, text=True, check=True, cwd=cwd
        )
        r = json.loads(res.stdout.strip().splitlines()[-1])
        if "error" in r:
            raise RuntimeError(f"{' '.join(cmd)}: exit code {r['error']:.0f}")
        if not best or r.get("stage_wall", r["wall"]) < best.get("stage_wall", best["wall"]):
            best = r
    return best
