"""What limits one machine: files/s of ``check --jobs 1/2`` over many small and many 30k-step runs.

Usage (from the repository root): ``python bench/scale_local.py [--repeat 1] [--small 200] [--large 30]``.
Prints one JSON line per measurement: wall and CPU seconds, files/s, the peak RSS of the largest
process (one worker), the load average at start and end. Beside the sweeps it measures what a worker
pays before its first file (a fresh process analysing a 600-step log, and the bare imports), the same
``--jobs 1`` sweep with polars held to one thread, and reading the sweep's bytes (the disk's share).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from bench_ingest import log_folder  # noqa: E402
from best import sink  # noqa: E402
from targets import DATA, measure, sweep_dir  # noqa: E402

ROOT = HERE.parent


def small_dir(runs: int, steps: int = 600) -> Path:
    """``runs`` seeded everyday-sized logs (600 steps with batch statistics), generated once."""
    return log_folder(DATA / f"small_{runs}x{steps}", runs, steps, seed=500, width=4)


def emit(what: str, files: int, r: dict[str, float], load0: float) -> None:
    """One JSON line: the measurement and the machine's state."""
    line = {
        "what": what,
        "files": files,
        "wall_s": round(r["wall"], 2),
        "cpu_s": round(r["cpu"], 2),
        "files_per_s": round(files / r["wall"], 2) if files else None,
        "peak_rss_mb": round(r["rss_mb"]),
        "cores": os.cpu_count(),
        "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
    }
    print(json.dumps(line), flush=True)


def check(d: Path, jobs: int, repeat: int, threads: str | None = None) -> dict[str, float]:
    """``check DIR --jobs N`` as a fresh process (polars threads capped when ``threads`` is given)."""
    cmd = [sys.executable, "-m", "logdoctor", "check", str(d), "--jobs", str(jobs), "-o", sink()]
    if threads:
        cmd = ["env", f"POLARS_MAX_THREADS={threads}", *cmd]
    return measure(cmd, repeat, ROOT)


def read_bytes(d: Path) -> dict[str, float]:
    """Reading every file of ``d`` once (page cache warm after the sweeps): the disk's share."""
    t, c = time.perf_counter(), time.process_time()
    for p in sorted(d.iterdir()):
        p.read_bytes()
    return {"wall": time.perf_counter() - t, "cpu": time.process_time() - c, "rss_mb": 0.0}


def main() -> int:
    """Run every measurement and print JSON lines."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--small", type=int, default=200, help="number of 600-step runs")
    ap.add_argument("--large", type=int, default=30, help="number of 30k-step runs")
    args = ap.parse_args()
    sets = {"small": (small_dir(args.small), args.small), "30k": (sweep_dir(args.large), args.large)}
    load0 = os.getloadavg()[0]
    one = str(sets["small"][0] / "run_0000.log")
    emit(
        "bare import polars+numpy+rich",
        0,
        measure([sys.executable, "-c", "import polars, numpy, rich"], 3, ROOT),
        load0,
    )
    emit(
        "worker start: analyze one 600-step log, fresh process",
        1,
        measure([sys.executable, "-m", "logdoctor", "analyze", one, "-o", sink()], 3, ROOT),
        load0,
    )
    for name, (d, n) in sets.items():
        for jobs in (1, 2):
            emit(f"check --jobs {jobs}, {name} runs", n, check(d, jobs, args.repeat), load0)
        emit(f"check --jobs 1, {name} runs, POLARS_MAX_THREADS=1", n, check(d, 1, args.repeat, "1"), load0)
        emit(f"read the {name} files' bytes", n, read_bytes(d), load0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
