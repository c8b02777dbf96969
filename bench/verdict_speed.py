"""Time the batching diagnosis on a long run: ``python bench/verdict_speed.py --rows 1000000``.

The simulated bucketed run is tiled (steps and epochs shifted) up to ``--rows`` steps, so the
tiled run has static composition by construction (its verdict is printed too).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fixtures.simulator import SimConfig, as_run, simulate
from logdoctor.diagnosis.batching import BatchingDiagnosis


def main(argv: list[str] | None = None) -> int:
    """Simulate, tile, diagnose and print the wall time of the diagnosis (best of ``--repeat``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    table, _ = simulate(SimConfig(strategy="bucketed", n_samples=400_000, epochs=10, seed=3))
    reps = -(-args.rows // table.height)
    shifted = [table.with_columns(pl.col("step") + i * table.height, pl.col("epoch") + i * 10) for i in range(reps)]
    run = as_run(pl.concat(shifted)[: args.rows])
    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        verdict = BatchingDiagnosis().diagnose(run, []).verdict
        best = min(best, time.perf_counter() - t0)
    print(f"{run.n_steps} steps: diagnosis {best:.2f} s (best of {args.repeat}):", verdict.batching)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
