"""Analyse many run logs on a local Dask cluster (one task per run, the JSON report as the result).

Usage (from the repository root): ``pip install -e ".[scale]"`` then
``python bench/scale_dask.py [--runs 16] [--steps 30000] [--workers 1 2] [PATH_OR_URL ...]``.
Without paths it generates seeded text logs into bench/data/. Paths are anything ``logdoctor analyze``
reads (files, run folders, fsspec URLs such as s3://bucket/run.log with s3fs installed). For each
worker count it starts a ``LocalCluster`` (one process per worker, one thread each, polars on one
thread), runs every log once cold (each worker imports logdoctor on its first task) and once warm,
and prints files/s, each worker's peak RSS and CPU seconds, and whether the reports equal those of a
plain in-process loop. Without dask installed it prints one line and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from bench_ingest import write_log  # noqa: E402


def report_document(path: str) -> dict[str, Any]:
    """The unit of work: one run in, its JSON report document (or error document) out."""
    from logdoctor.config import AnalysisConfig
    from logdoctor.pipeline import analyze_one
    from logdoctor.renderers.jsonreport import error_dict, report_dict

    outcome = analyze_one(path, AnalysisConfig())
    return report_dict(outcome.report) if outcome.report is not None else error_dict(outcome)


def worker_usage() -> dict[str, float]:
    """This worker process's peak RSS (MB) and CPU seconds so far."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {"rss_mb": ru.ru_maxrss / 1024, "cpu_s": ru.ru_utime + ru.ru_stime}


def inputs(runs: int, steps: int) -> list[str]:
    """``runs`` seeded text logs of ``steps`` steps with batch statistics, generated once."""
    d = HERE / "data" / f"sweep_{runs}x{steps}"
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(runs):
        if not (p := d / f"run_{i:03d}.log").exists():
            write_log(p, steps, seed=100 + i)
        out.append(str(p))
    return out


def on_cluster(paths: list[str], workers: int) -> dict[str, Any]:
    """Start a local cluster of ``workers`` processes, run every path twice; times, usage, documents."""
    from dask.distributed import Client, LocalCluster

    t0 = time.perf_counter()
    env = {"POLARS_MAX_THREADS": "1"}
    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, env=env
        ) as cluster,
        Client(cluster) as client,
    ):
        started = time.perf_counter() - t0
        timings, docs = [], []
        for _ in ("cold", "warm"):
            t = time.perf_counter()
            futures = client.map(report_document, paths, pure=False)
            docs = client.gather(futures)
            timings.append(time.perf_counter() - t)
        usage = client.run(worker_usage)
    return {"start_s": started, "cold_s": timings[0], "warm_s": timings[1], "usage": list(usage.values()), "docs": docs}


def main() -> int:
    """Parse the arguments, run the cluster measurements, print one line per worker count."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", help="logs to analyse (default: generated)")
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--steps", type=int, default=30_000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--json", action="store_true", help="print JSON lines instead of text")
    args = ap.parse_args()
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        print('scale_dask: dask is not installed (pip install -e ".[scale]"); skipped')
        return 0
    paths = args.paths or inputs(args.runs, args.steps)
    serial = [report_document(p) for p in paths]
    load = os.getloadavg()[0]
    for workers in args.workers:
        r = on_cluster(paths, workers)
        rss = max(u["rss_mb"] for u in r["usage"])
        cpu = sum(u["cpu_s"] for u in r["usage"])
        line = {
            "workers": workers,
            "files": len(paths),
            "cluster_start_s": round(r["start_s"], 2),
            "files_per_s_cold": round(len(paths) / r["cold_s"], 2),
            "files_per_s_warm": round(len(paths) / r["warm_s"], 2),
            "peak_rss_mb_per_worker": round(rss),
            "worker_cpu_s": round(cpu, 1),
            "same_reports_as_serial": json.dumps(r["docs"], sort_keys=True) == json.dumps(serial, sort_keys=True),
            "load_at_start": round(load, 2),
            "cores": os.cpu_count(),
        }
        print(json.dumps(line) if args.json else ", ".join(f"{k} {v}" for k, v in line.items()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
