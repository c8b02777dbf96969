"""Runs per second of a fleet through each executor, and what the driver pays per run.

Usage (repository root, extras dask and ray installed):
``python bench/fleet.py [--runs 200] [--min-steps 600] [--max-steps 30000] [--configs local-j1 local-j2 dask-2 ray-2]``.
Generates ``--runs`` seeded text logs (step, loss, lr, grad_norm; steps spread evenly from
``--min-steps`` to ``--max-steps``) into bench/data/, once. Each configuration runs in a fresh child
process (``logdoctor.executors.analyze_fleet``, as ``logdoctor check DIR --executor ...`` does) that
reports: wall seconds (cluster start included, and apart), runs/s, the driver's listing time per run,
the driver's CPU per run (listing, submission, result collection: with an engine, everything the
driver does), the driver's peak RSS, and the mean size of a result's document. Every configuration
must give the same documents (their digest is compared). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def write_runs(runs: int, lo: int, hi: int) -> Path:
    """``runs`` seeded logs in bench/data/fleet_<runs>_<lo>_<hi>/ (written once); every tenth diverges."""
    folder = HERE / "data" / f"fleet_{runs}_{lo}_{hi}"
    folder.mkdir(parents=True, exist_ok=True)
    for i, steps in enumerate(np.linspace(lo, hi, runs).astype(int)):
        path = folder / f"run_{i:05d}.log"
        if path.exists():
            continue
        rng = np.random.default_rng(i)
        t = np.arange(1, steps + 1)
        loss = 0.6 + 2.4 * np.exp(-t / (0.3 * steps)) + rng.normal(0, 0.03, steps)
        if i % 10 == 9:
            loss[int(steps * 0.8) :] = np.nan
        grad = np.abs(rng.normal(1.0, 0.2, steps))
        tmp = path.with_suffix(".tmp")
        tmp.write_text(
            "".join(
                f"step {s}/{steps} | loss={v:.4f} lr=3.0e-04 grad_norm={g:.3f}\n"
                for s, v, g in zip(t, loss, grad, strict=True)
            )
        )
        tmp.rename(path)
    return folder


def one(folder: str, config: str) -> dict[str, object]:
    """In the child: one configuration over the folder."""
    from logdoctor import pipeline
    from logdoctor.executors import analyze_fleet

    kind, _, n = config.partition("-")
    workers = int(n.removeprefix("j") or 1)
    t0 = time.perf_counter()
    entries = pipeline.expand_entries([folder])
    listing = time.perf_counter() - t0
    start_s = 0.0
    if kind == "dask":  # the cluster's start, apart from the fleet's time
        from distributed import Client, LocalCluster

        t = time.perf_counter()
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            env={"POLARS_MAX_THREADS": "1"},
        )
        client = Client(cluster)
        executor = f"dask://{cluster.scheduler_address}"
        start_s = time.perf_counter() - t
    elif kind == "ray":
        import ray

        t = time.perf_counter()
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        executor, start_s = "ray", time.perf_counter() - t
    else:
        executor = "local"
    cpu0 = time.process_time()
    t = time.perf_counter()
    results = analyze_fleet([folder], jobs=workers, executor=executor)
    wall = time.perf_counter() - t
    cpu = time.process_time() - cpu0
    if kind == "dask":
        client.close()
        cluster.close()
    elif kind == "ray":
        ray.shutdown()
    docs = [r.document for r in results]
    return {
        "config": config,
        "runs": len(entries),
        "start_s": round(start_s, 2),
        "wall_s": round(wall, 2),
        "runs_per_s": round(len(results) / wall, 2),
        "listing_ms_per_run": round(1000 * listing / len(entries), 3),
        "driver_cpu_ms_per_run": round(1000 * cpu / len(results), 2),
        "driver_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "doc_bytes_mean": int(np.mean([len(d) for d in docs])),
        "digest": hashlib.sha256("\n".join(docs).encode()).hexdigest()[:12],
        "errors": sum(1 for r in results if r.error),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--min-steps", type=int, default=600)
    ap.add_argument("--max-steps", type=int, default=30_000)
    ap.add_argument("--configs", nargs="+", default=["local-j1", "local-j2", "dask-2", "ray-2"])
    ap.add_argument("--one", nargs=2, metavar=("FOLDER", "CONFIG"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return 0
    folder = write_runs(args.runs, args.min_steps, args.max_steps)
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    print(
        f"{args.runs} runs, {args.min_steps}-{args.max_steps} steps; load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores"
    )
    print(
        "| executor | runs/s | wall s | engine start s | listing ms/run | driver CPU ms/run | driver peak RSS MB "
        "| document bytes | digest |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for config in args.configs:
        out = subprocess.run(
            [sys.executable, __file__, "--one", str(folder), config],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode:
            print(f"| {config} | failed: {out.stderr.strip().splitlines()[-1:]} |")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"| {config} | {r['runs_per_s']} | {r['wall_s']} | {r['start_s']} | {r['listing_ms_per_run']} | "
            f"{r['driver_cpu_ms_per_run']} | {r['driver_peak_rss_mb']} | {r['doc_bytes_mean']} | {r['digest']} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
