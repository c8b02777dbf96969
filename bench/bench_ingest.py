"""Ingest speed: logdoctor (pipeline.load) vs a plain line-by-line Python ``re`` loop, same run.

Usage: ``python bench/bench_ingest.py [--steps 1000000] [--repeat 3]``. The log (canonical lines
with batch statistics plus noise lines, seeded) is written once to bench/data/ (git-ignored).
Each measurement runs in its own subprocess so that peak RSS (``ru_maxrss``) is its own.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STEP_RE = re.compile(r"^step (\d+)/(\d+) \| (.*)$")
PAIR_RE = re.compile(r"([\w/]+)=(\S+)")


def write_log(path: Path, steps: int, seed: int = 7) -> None:
    """A canonical log of ``steps`` lines with batch stats, a warning every 1000 steps and an
    eval line every 5000."""
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        for s in range(1, steps + 1):
            lo, hi = rng.randint(40, 600), rng.randint(600, 2048)
            fh.write(
                f"step {s}/{steps} | loss={2 + 3 * rng.random():.4f} acc={rng.random():.4f} "
                f"lr=3.0e-04 grad_norm={rng.random() * 2:.2f} tok/s={rng.randint(20000, 30000)} "
                f"epoch={s // 5000} | batch: n_seq={rng.randint(8, 16)} "
                f"tokens={rng.randint(6000, 9000)} len_mean={(lo + hi) / 2:.1f} len_min={lo} "
                f"len_max={hi} pad_frac={rng.random() / 10:.3f} "
                f"batch_fp={rng.getrandbits(32):08x}\n"
            )
            if s % 1000 == 0:
                fh.write("WARNING: dataloader worker 3 is slow (information only)\n")
            if s % 5000 == 0:
                fh.write(f"eval step {s} | val_loss={2 + rng.random():.4f} val_acc=0.41\n")


def log_folder(folder: Path, runs: int, steps: int, seed: int = 100, width: int = 3) -> Path:
    """``runs`` seeded canonical logs of ``steps`` lines in ``folder`` (``run_000.log``, ... with
    seeds ``seed``, ``seed + 1``, ...), each written only when missing: the inputs of the sweeps."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(runs):
        if not (p := folder / f"run_{i:0{width}d}.log").exists():
            write_log(p, steps, seed=seed + i)
    return folder


def re_loop(path: Path) -> int:
    """The baseline: read lines, match the step line, pull every key=value pair into a dict."""
    rows = []
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = STEP_RE.match(line)
            if not m:
                continue
            rec: dict[str, object] = {"step": int(m[1]), "total": int(m[2])}
            for key, val in PAIR_RE.findall(m[3]):
                rec[key] = val if key == "batch_fp" else float(val)
            if "loss" in rec:
                rows.append(rec)
    return len(rows)


def measure(which: str, path: Path) -> dict[str, float]:
    """Run one measurement here (in the subprocess) and return its numbers. logdoctor's import
    (polars, numpy, scipy...) is timed apart: ``import_s``; ``wall_s``/``cpu_s`` are the load."""
    start = time.perf_counter()
    if which == "logdoctor":
        sys.path.insert(0, str(HERE.parent))
        from logdoctor import pipeline

        def run() -> int:
            return pipeline.load(str(path)).n_steps
    else:

        def run() -> int:
            return re_loop(path)

    import_s = time.perf_counter() - start
    wall, cpu = time.perf_counter(), time.process_time()
    rows = run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    maxrss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "import_s": import_s,
        "maxrss_mb": maxrss_mb,
        "rows": rows,
    }


def _run(which: str, path: Path) -> dict[str, float]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--measure", which, str(path)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> int:
    """Generate the log if needed, measure both, print the table and the ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the best is reported")
    ap.add_argument("--measure", nargs=2, metavar=("WHICH", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure[0], Path(args.measure[1]))))
        return 0
    path = HERE / "data" / f"canonical_{args.steps}.log"
    if not path.exists():
        write_log(path, args.steps)
    print(f"log: {path} ({path.stat().st_size / 1e6:.1f} MB, {args.steps} steps)")
    best: dict[str, dict[str, float]] = {}
    for _ in range(args.repeat):
        for which in ("logdoctor", "re-loop"):
            r = _run(which, path)
            if which not in best or r["wall_s"] < best[which]["wall_s"]:
                best[which] = r
    for which, r in best.items():
        print(
            f"{which:10s} wall {r['wall_s']:6.2f} s  cpu {r['cpu_s']:6.2f} s  "
            f"peak RSS {r['maxrss_mb']:7.0f} MB  rows {int(r['rows'])}  "
            f"(import {r['import_s']:.2f} s, not in wall/cpu)"
        )
    ld, rl = best["logdoctor"], best["re-loop"]
    print(
        f"speed-up (re-loop / logdoctor): wall {rl['wall_s'] / ld['wall_s']:.1f}x, cpu {rl['cpu_s'] / ld['cpu_s']:.1f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
