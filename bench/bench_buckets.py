"""Worked example and timing for `logdoctor buckets`: 1M log-normal lengths, budget 8192.

Run: ``python bench/bench_buckets.py [OUT_DIR]``. Writes ``lengths.txt`` there, times reading and
the recommendation, and prints an efficiency sweep over K (the README's worked-example numbers).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's logdoctor

from logdoctor.buckets import read_lengths, recommend


def main() -> int:
    """Generate, time, sweep."""
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    # median ~245 tokens, mean ~370, 0.3% beyond 4096: a typical web/instruction-tuning corpus
    lengths = np.rint(rng.lognormal(5.5, 0.9, 1_000_000)).astype(np.int64) + 1
    path = out / "lengths.txt"
    np.savetxt(path, lengths, fmt="%d")
    t0 = time.perf_counter()
    values = read_lengths(str(path))
    t1 = time.perf_counter()
    plan = recommend(values, 8192)
    t2 = time.perf_counter()
    print(f"{path}: read {values.size:,} lengths in {t1 - t0:.3f}s; recommend in {t2 - t1:.2f}s")
    print("K  model_eff  bucketed_eff  vs_sorted  vs_random  batches/epoch  smallest_bucket_batches")
    for k in (1, 2, 3, 4, 6, 8, 12, 16, len(plan.boundaries)):
        p = recommend(values, 8192, buckets=k)
        st = p.strategies
        print(
            f"{k:<3}{p.model_efficiency:9.3f}{st['bucketed'].padding_efficiency:14.3f}"
            f"{p.relative_throughput('bucketed', 'sorted'):11.3f}"
            f"{p.relative_throughput('bucketed', 'random'):11.3f}"
            f"{st['bucketed'].batches_per_epoch:15,.0f}"
            f"{min(b.batches_per_epoch for b in p.buckets):25,.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
