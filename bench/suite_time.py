"""Issue 27: the test suite's time, measured as CI runs it (``python -m pytest``, xdist on every core).

Usage (from the repository root): ``python bench/suite_time.py [--out bench/out/suite_time.json]
[-- PYTEST ARGS]``. Runs the suite once with the tests/timeline.py plugin (its rows kept beside
the output, ``*.timeline.jsonl``) and prints one JSON document: wall and CPU seconds of the whole
run (children included), the load average at start and end, each worker's start-up (collection)
seconds, busy and CPU seconds and idle tail, and the modules that cost the most CPU and the most
waiting (wall minus CPU). Read it on a quiet machine:
on shared cores wall time measures the neighbours too. The goal is <= 5 minutes on 2 quiet cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.timeline import per_worker  # noqa: E402


def _children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _summary(rows: list[dict], began: float) -> dict:
    """Per worker and per module figures of the timeline's rows."""
    cpu: Counter[str] = Counter()
    wall: Counter[str] = Counter()
    for r in rows:
        module = r["nodeid"].split("::")[0]
        cpu[module] += r["cpu"] or 0.0
        wall[module] += r["stop"] - r["start"]
    waiting = sorted(wall, key=lambda m: cpu[m] - wall[m])[:10]
    return {
        "workers": per_worker(rows, began),
        "top_cpu_modules": [[m, round(c, 1)] for m, c in cpu.most_common(15)],
        "top_waiting_modules": [[m, round(wall[m] - cpu[m], 1)] for m in waiting],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "suite_time.json")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    timeline = args.out.with_suffix(".timeline.jsonl")  # each test phase, for a closer look
    timeline.unlink(missing_ok=True)
    load0, began, cpu0 = os.getloadavg(), time.time(), _children_cpu()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.timeline", "--timeline", str(timeline), *args.pytest_args],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall, cpu = time.time() - began, _children_cpu() - cpu0
    rows = [json.loads(line) for line in timeline.read_text().splitlines()] if timeline.exists() else []
    tail = [ln for ln in proc.stdout.splitlines() if ln.strip()][-1:] or [""]
    doc = {
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(began)),
        "cores": os.cpu_count(),
        "load_average_start_end": [round(load0[0], 2), round(os.getloadavg()[0], 2)],
        "exit_code": proc.returncode,
        "result": tail[0],
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        **(_summary(rows, began) if rows else {}),
    }
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(doc, indent=1))
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())
