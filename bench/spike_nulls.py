"""False-positive rates of the spike/grad-norm rules on heavy-tailed nulls (docs/detectors.md quotes them).

Null runs: a falling loss curve with Student-t(df) noise in log space (and a grad norm with its own
Student-t noise); a warning on such a run is a false positive. Run:

    python bench/spike_nulls.py [--runs 200]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from logdoctor.detectors.spikes import SpikeDetector
from tests.unit.synth import make_run


def null_run(rng: np.random.Generator, n: int, df: float, grad: bool) -> object:
    """One healthy run: power-law-ish decay, heavy-tailed multiplicative noise."""
    t = np.arange(n)
    loss = (2 + 8 * np.exp(-t / (n / 6))) * np.exp(0.02 * rng.standard_t(df, n))
    cols = {"grad_norm": np.exp(0.1 * rng.standard_t(df, n))} if grad else {}
    return make_run(loss, **cols)


def rate(detector: SpikeDetector, runs: int, n: int, df: float, grad: bool) -> float:
    """Fraction of null runs with at least one warning or error."""
    rng = np.random.default_rng(int(n * 10 + df))
    hits = 0
    for _ in range(runs):
        found = detector.analyze(null_run(rng, n, df, grad)).findings  # type: ignore[arg-type]
        hits += any(f.severity.label != "info" for f in found)
    return hits / runs


def main() -> None:
    """Print a Markdown table: null, run length, rate with the old rule (every spike a warning), rate now."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    old, new = SpikeDetector(null_alpha=1.0), SpikeDetector()
    print("| null | rows | grad norm | runs warned, every spike a warning | runs warned, now |")
    print("|---|---|---|---|---|")
    for df in (3.0, 4.0, 8.0):
        for n in (500, 2000, 10000):
            runs = args.runs if n <= 2000 else max(20, args.runs // 5)
            a, b = rate(old, runs, n, df, True), rate(new, runs, n, df, True)
            print(f"| Student-t({df:g}) | {n} | yes | {a:.1%} | {b:.1%} |")


if __name__ == "__main__":
    main()
