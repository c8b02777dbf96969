"""Peak memory of ingest + analysis on a large log: ``python bench/bench_memory.py [--gb 2] [--budget 512M]``.

Writes a seeded text log of about ``--gb`` GB into bench/data/ (git-ignored), then runs
``logdoctor analyze`` on it in a child process with the memory budget lowered to ``--budget``
(through $LOGDOCTOR_MAX_MEMORY) and reports the child's peak RSS (``ru_maxrss``), wall time and
what the report says about the reduction. For comparison it also analyses the first ``--whole-mb``
MB of the log read whole (default budget). The data file is deleted afterwards unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"
STEPS_PER_EPOCH = 4096
BLOCK = 1_000_000


def write_log(path: Path, target_bytes: int, seed: int = 0) -> int:
    """Write a length-sorted-looking run (loss sawtooth with the epoch as period, a few spikes)."""
    rng = np.random.default_rng(seed)
    written, start = 0, 1
    with path.open("wb") as fh:
        while written < target_bytes:
            step = np.arange(start, start + BLOCK)
            loss = 2 + 2 * np.exp(-step / 2e6) + 0.4 * (step % STEPS_PER_EPOCH) / STEPS_PER_EPOCH
            loss += 0.03 * rng.standard_normal(BLOCK)
            loss[rng.integers(0, BLOCK, 3)] += 8.0
            frame = pl.DataFrame({"step": step, "loss": loss.round(5), "epoch": step // STEPS_PER_EPOCH})
            lines = frame.select(pl.format("step {} | loss={} lr=3.0e-04 epoch={}", "step", "loss", "epoch"))
            data = ("\n".join(lines.to_series().to_list()) + "\n").encode()
            fh.write(data)
            written += len(data)
            start += BLOCK
    return start - 1


def measure(path: Path, budget: str | None) -> dict[str, object]:
    """Analyse ``path`` in a child process; its peak RSS (MiB), wall time and the report's notes.

    The peak is the child's VmHWM (its own address space since exec); ``ru_maxrss`` is printed too,
    but on Linux it starts from the parent's peak at fork, so it cannot go below the parent's.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("LOGDOCTOR_MAX_MEMORY", None)
    if budget:
        env["LOGDOCTOR_MAX_MEMORY"] = budget
    code = (
        "import json,resource,sys;from logdoctor import pipeline;"
        "r=pipeline.analyze(pipeline.load(sys.argv[1]));"
        "print(json.dumps({'rows': r.run.n_steps, 'notes': list(r.meta.notes), 'lines': r.meta.lines_read,"
        "'verdict': r.verdict.batching, 'findings': sorted({f.code for f in r.findings}),"
        "'rss_mib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,"
        "'hwm_mib': int([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0]) / 1024}))"
    )
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, env=env, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"analysis failed:\n{proc.stderr}")
    out: dict[str, object] = json.loads(proc.stdout)
    out["wall_s"] = round(wall, 1)
    out["size_mib"] = round(path.stat().st_size / 2**20)
    return out


def main() -> int:
    """Generate, measure, report, clean up."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gb", type=float, default=2.0)
    ap.add_argument("--budget", default="512M", help="memory budget for the large log")
    ap.add_argument("--whole-mb", type=int, default=200, help="size of the whole-read comparison log")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    big, small = DATA / "memory_big.log", DATA / "memory_whole.log"
    try:
        t0 = time.perf_counter()
        steps = write_log(big, int(args.gb * 2**30))
        print(f"wrote {big.stat().st_size / 2**30:.2f} GiB, {steps:,} steps in {time.perf_counter() - t0:.0f}s")
        with big.open("rb") as src, small.open("wb") as dst:
            head = src.read(args.whole_mb * 2**20)
            dst.write(head[: head.rfind(b"\n") + 1])
        for label, path, budget in (("whole read", small, None), ("streamed", big, args.budget)):
            res = measure(path, budget)
            print(
                f"{label:>10}: {res['size_mib']} MiB log, budget {budget or 'default'}: peak RSS "
                f"{res['hwm_mib']:.0f} MiB (ru_maxrss {res['rss_mib']:.0f}), {res['wall_s']}s, "
                f"{res['rows']:,} rows of {res['lines']:,} lines, "
                f"verdict {res['verdict']}, codes {res['findings']}"
            )
            for note in res["notes"]:  # type: ignore[attr-defined]
                print(f"            note: {note}")
    finally:
        if not args.keep:
            big.unlink(missing_ok=True)
            small.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
