"""Issue 42.5: what ``analyze -j 2`` pays on many small logs that ``-j 1`` does not.

Usage (from the repository root): ``python bench/bench_jobs.py [--runs 30] [--steps 2000] [--repeat 3]``;
prints one JSON document. The logs are bench_sweep's (seeded canonical text logs, bench/data/).

- ``worker_startup``: a spawned worker as ``logdoctor.parallel`` starts one (spawn, its initializer),
  handed one run: wall from the submit to the result, the worker's CPU in all (interpreter, imports,
  the first analysis's first-use imports), and its CPU for the next runs (per run, warm).
- ``in_process``: the same in this process: the first run (first-use imports) and the next (per run).
- ``model``: on two idle cores, ``-j 1`` takes ``first + (runs - 1) * per_run``; ``-j 2`` shares the
  runs once the worker is up: ``(first + startup + (runs - 2) * per_run) / 2`` beyond the caller's
  own start, so its speed-up is what the worker's start-up leaves (the stable part on a busy
  machine, where the wall ratio of the two commands is whatever the other processes leave).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from bench_ingest import log_folder  # noqa: E402

from logdoctor import parallel, pipeline  # noqa: E402
from logdoctor.config import AnalysisConfig  # noqa: E402


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def worker(logs: list[Path], cfg: AnalysisConfig) -> dict[str, float]:
    """One spawned worker: its start-up (to the first result) and its per-run CPU after."""
    before = _cpu(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=parallel._worker_setup)
    with pool:
        pool.submit(pipeline._analyze_entry, (str(logs[0]), True), cfg).result()
        first = time.perf_counter() - t0
        t1 = time.perf_counter()
        for log in logs[1:]:
            pool.submit(pipeline._analyze_entry, (str(log), True), cfg).result()
        rest = time.perf_counter() - t1
    cpu = _cpu(resource.RUSAGE_CHILDREN) - before
    return {"first_wall": first, "rest_wall_per_run": rest / max(1, len(logs) - 1), "cpu_total": cpu}


def in_process(logs: list[Path], cfg: AnalysisConfig) -> dict[str, float]:
    c0 = _cpu(resource.RUSAGE_SELF)
    pipeline.analyze_one(str(logs[0]), cfg)
    c1 = _cpu(resource.RUSAGE_SELF)
    for log in logs[1:]:
        pipeline.analyze_one(str(log), cfg)
    c2 = _cpu(resource.RUSAGE_SELF)
    return {"first_cpu": c1 - c0, "per_run_cpu": (c2 - c1) / max(1, len(logs) - 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    logs = sorted(log_folder(HERE / "data" / f"sweep_{args.runs}x{args.steps}", args.runs, args.steps).glob("*.log"))
    cfg = pipeline.worker_config(AnalysisConfig(), 2)
    local = in_process(logs[:8], cfg)
    workers = [worker(logs[:8], cfg) for _ in range(args.repeat)]
    best = min(workers, key=lambda w: w["cpu_total"])
    per_run = local["per_run_cpu"]
    startup = best["cpu_total"] - 7 * per_run  # the worker's CPU beyond its 7 warm runs
    n = args.runs
    t1 = local["first_cpu"] + (n - 1) * per_run
    t2 = (local["first_cpu"] + startup + (n - 2) * per_run) / 2
    print(
        json.dumps(
            {
                "runs": n,
                "steps": args.steps,
                "in_process": {k: round(v, 3) for k, v in local.items()},
                "worker": {k: round(v, 3) for k, v in best.items()},
                "worker_startup_cpu": round(startup, 3),
                "model_speedup_2_idle_cores": round(t1 / max(t2, t1 / 2), 2),
                "load_average": [round(x, 2) for x in os.getloadavg()],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
