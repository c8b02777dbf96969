"""Issue 17, target (c): per-run cost in one process and ``check --jobs 2`` against ``--jobs 1``.

Usage (from the repository root): ``python bench/bench_sweep.py [--runs 30] [--steps 30000]
[--repeat 2]``; prints one JSON document. The sweep (canonical logs with batch statistics, seeds
100.., bench_ingest.write_log) is written once to bench/data/ (git-ignored). Two measurements:

- ``per_run``: one process imports the pipeline, analyses the first run (first-use imports paid),
  then times ``pipeline.analyze_one`` over every run: wall and CPU per run (target <= 0.2 s).
- ``check DIR --jobs 1`` and ``--jobs 2`` each in a fresh process through bench/child.py
  (``--rusage``: wall, and CPU of the whole process tree); best wall of ``--repeat``; the two
  reports must be byte-identical. Target: ``--jobs 2`` >= 1.5x faster on 2 idle cores. On a shared
  machine the wall ratio is whatever the other processes leave; ``cpu_overhead`` (CPU of --jobs 2
  over --jobs 1: the worker's imports and the results' transfer) is the stable part.

``measure(runs, steps, repeat)`` returns the same document for bench/run.py.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
CHILD = str(HERE / "child.py")
sys.path[:0] = [str(HERE)]

from bench_ingest import log_folder  # noqa: E402

PER_RUN = """
import json, sys, time
from pathlib import Path
from logdoctor import pipeline
from logdoctor.config import AnalysisConfig
paths = sorted(str(p) for p in Path(sys.argv[1]).glob("*.log"))
cfg = AnalysisConfig()
pipeline.analyze_one(paths[0], cfg)
w, c = time.perf_counter(), time.process_time()
for p in paths:
    pipeline.analyze_one(p, cfg)
print(json.dumps({"wall": (time.perf_counter() - w) / len(paths), "cpu": (time.process_time() - c) / len(paths)}))
"""


def sweep(runs: int, steps: int) -> Path:
    """The seeded sweep folder (written once)."""
    return log_folder(DATA / f"sweep_{runs}x{steps}", runs, steps)


def _check(folder: Path, jobs: int, out: Path, repeat: int) -> dict[str, float]:
    cmd = [sys.executable, "-m", "logdoctor", "check", str(folder), "--jobs", str(jobs), "-o", str(out)]
    runs = []
    for _ in range(repeat):
        res = subprocess.run(
            [sys.executable, CHILD, "--rusage", "--", *cmd], capture_output=True, text=True, check=True, cwd=ROOT
        )
        runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
    return min(runs, key=lambda r: r["wall"])


def measure(runs: int = 30, steps: int = 30_000, repeat: int = 2) -> dict[str, object]:
    """Per-run cost in one process, and --jobs 1 vs --jobs 2 over the sweep."""
    folder = sweep(runs, steps)
    res = subprocess.run(
        [sys.executable, "-c", PER_RUN, str(folder)], capture_output=True, text=True, check=True, cwd=ROOT
    )
    per_run = json.loads(res.stdout.strip().splitlines()[-1])
    with tempfile.TemporaryDirectory() as tmp:
        out1, out2 = Path(tmp) / "j1.txt", Path(tmp) / "j2.txt"
        j1, j2 = _check(folder, 1, out1, repeat), _check(folder, 2, out2, repeat)
        identical = out1.read_bytes() == out2.read_bytes()
    return {
        "target": "<= 0.2 s per run in one process; check --jobs 2 >= 1.5x faster than --jobs 1, identical output",
        "sweep": f"{runs} x {steps}",
        "per_run": {"wall": round(per_run["wall"], 3), "cpu": round(per_run["cpu"], 3)},
        "jobs1": {k: round(v, 3) for k, v in j1.items()},
        "jobs2": {k: round(v, 3) for k, v in j2.items()},
        "speedup_wall": round(j1["wall"] / j2["wall"], 2),
        "cpu_overhead": round(j2["cpu"] / j1["cpu"], 3),
        "identical": identical,
        "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--steps", type=int, default=30_000)
    ap.add_argument("--repeat", type=int, default=2, help="fresh runs of each check; the best wall is kept")
    args = ap.parse_args()
    print(json.dumps(measure(args.runs, args.steps, args.repeat), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
