"""The verdict's thresholds against their nulls: how often each rule fires where nothing is wrong.

Usage::

    python bench/verdict_nulls.py --runs 200

Nulls: (1) i.i.d. batches with coarse signatures (narrow token-budget lengths) over 5-10 epochs:
the static rule; (2) random batch order with no length effect: the sorted rule and the
loss-tracks-length rule; (3) white and red (AR(1), φ=0.9) noise losses with an lr warm-up, no batch
statistics: the grouped (loss period) rule. Prints the rate each fires and the extreme statistics.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from logdoctor.detectors.periodicity import PeriodicityDetector
from logdoctor.diagnosis import lengthstats as ls
from logdoctor.diagnosis import recurrence as rc
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.diagnosis.thresholds import DEFAULT
from tests.unit.synth import make_run


def iid_static(rng: np.random.Generator, runs: int) -> str:
    """Static calls and the smallest occupancy p on i.i.d. coarse signatures."""
    calls, ps = 0, []
    for _ in range(runs):
        n, e = int(rng.choice([2_000, 20_000, 200_000])), int(rng.integers(5, 11))
        spread = rng.uniform(0.02, 0.08)
        mean = rng.normal(300, 300 * spread / 3, n).round(1)
        lo, hi = np.floor(mean * (1 - spread * rng.random(n))), np.ceil(mean * (1 + spread * rng.random(n)))
        ids = np.unique(np.c_[lo, hi, mean], axis=0, return_inverse=True)[1].ravel()
        epoch = np.repeat(np.arange(e), -(-n // e))[:n]
        stride = float(rng.choice([1, 1, 2, 5]))
        r = rc.recurrence(ids, epoch, stride, "signature", ("x",), min_excess=DEFAULT.min_excess)
        assert r is not None
        calls += int(DEFAULT.static(r))
        ps.append(r.p_value)
    return f"iid coarse signatures: static {calls}/{runs}; min p {min(ps):.2g}; mean p {np.mean(ps):.2f}"


def random_order(rng: np.random.Generator, runs: int) -> str:
    """Sorted and loss-tracks-length calls under random order with no length effect."""
    sorted_calls = tracks = 0
    lag1 = []
    diag = BatchingDiagnosis()
    for _ in range(runs):
        n = int(rng.choice([30, 100, 1000, 20000]))
        x = rng.lognormal(5, 0.6, n)
        o = ls.order_stats(np.arange(n), x, x)
        loss = rng.normal(0, 1, n)
        c = ls.loss_length(loss, x)
        tracks += int(ls.tracks(c))
        lag1.append(o.lag1)
        sorted_calls += int(o.n >= 30 and diag.thresholds.ordered(o))
    return (
        f"random order, no length effect: sorted order {sorted_calls}/{runs}; loss tracks length "
        f"{tracks}/{runs} (p<1e-3 expects {runs / 1000:.1f}); max lag-1 {max(lag1):.2f}"
    )


def noise_grouped(rng: np.random.Generator, runs: int) -> str:
    """Grouped calls on white and red noise losses (LD201 then the verdict)."""
    calls, periods = 0, 0
    for _ in range(runs):
        n = int(rng.choice([2000, 6000]))
        t = np.arange(n)
        noise = rng.normal(0, 0.1, n)
        if rng.random() < 0.5:
            for i in range(1, n):
                noise[i] += 0.9 * noise[i - 1]
        run = make_run(2 + np.exp(-t / 1000) + noise, lr=np.minimum(1, (t + 1) / 200))
        found = PeriodicityDetector().analyze(run).findings
        periods += int(any(f.code == "LD201" for f in found))
        calls += int(BatchingDiagnosis().diagnose(run, found).verdict.batching == "grouped")
    return f"white/red noise losses: LD201 period {periods}/{runs}; grouped {calls}/{runs}"


def main(argv: list[str] | None = None) -> int:
    """Run the three nulls."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(iid_static(rng, args.runs))
    print(random_order(rng, args.runs))
    print(noise_grouped(rng, max(20, args.runs // 4)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
