"""The changepoint search on hard cases against ruptures' exact KernelCPD (linear kernel, jump=1, C).

Run from the repository root: ``python bench/bench_cp_hard.py``. Every signal is seeded; the
penalty is 3 sigma^2 log n with sigma the noise estimate the detector uses (MAD of differences).
"same" = as many breakpoints, each within 3 rows; "excess" = the fast search's penalised L2 cost
above the exact optimum's. Prints a Markdown table (docs/detectors.md keeps the latest).
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import ruptures as rpt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from logdoctor.detectors.cpsearch import fast_breakpoints
from logdoctor.detectors.kernelcpd import pelt_l2

Signal = Callable[[int, np.random.Generator], np.ndarray]


def regimes(shortest: int, longest: int) -> Signal:
    """Levels N(0, 3) lasting shortest..longest rows, noise N(0, 1)."""

    def make(n: int, rng: np.random.Generator) -> np.ndarray:
        lengths = rng.integers(shortest, longest + 1, size=n // shortest + 1)
        return np.repeat(rng.normal(0, 3, lengths.size), lengths)[:n] + rng.normal(0, 1, n)

    return make


def mixed(n: int, rng: np.random.Generator) -> np.ndarray:
    """Long regimes (1,000-3,000 rows) with clusters of 5-30 short ones (5-30 rows) between them."""
    parts: list[np.ndarray] = []
    while sum(map(len, parts)) < n:
        if rng.random() < 0.3:
            parts += [np.full(rng.integers(5, 30), rng.normal(0, 3)) for _ in range(rng.integers(5, 30))]
        else:
            parts.append(np.full(rng.integers(1000, 3000), rng.normal(0, 3)))
    return np.concatenate(parts)[:n] + rng.normal(0, 1, n)


def bumps(n: int, rng: np.random.Generator) -> np.ndarray:
    """Five long regimes with 15 isolated bumps of 4-14 rows (+-4 sigma)."""
    y = np.repeat(rng.normal(0, 3, 5), n // 5 + 1)[:n].astype(float)
    for p in rng.integers(0, n - 20, 15):
        y[p : p + rng.integers(4, 15)] += rng.choice([-4.0, 4.0])
    return y + rng.normal(0, 1, n)


def decay(n: int, rng: np.random.Generator) -> np.ndarray:
    """A smooth decaying loss (no true changepoint: the search cuts it into a staircase)."""
    t = np.arange(n)
    return 2 + 3 * np.exp(-t / (n / 10)) + 0.05 * rng.normal(size=n)


def pw_constant(n: int, rng: np.random.Generator) -> np.ndarray:
    """ruptures' own easy signal: 5 regimes of a few thousand rows (the original claim's case)."""
    return np.asarray(rpt.pw_constant(n, 1, 5, noise_std=1.0, seed=n)[0][:, 0])


CASES: list[tuple[str, Signal, int]] = [
    ("pw_constant (5 regimes)", pw_constant, 20_000),
    ("regimes 5-30 rows", regimes(5, 30), 5_000),
    ("regimes 5-30 rows", regimes(5, 30), 20_000),
    ("regimes 5-30 rows", regimes(5, 30), 100_000),
    ("regimes 20-80 rows", regimes(20, 80), 20_000),
    ("regimes 50-200 rows", regimes(50, 200), 20_000),
    ("long regimes + short clusters", mixed, 20_000),
    ("long regimes + short clusters", mixed, 100_000),
    ("isolated 4-14-row bumps", bumps, 20_000),
    ("smooth decay", decay, 20_000),
]


def cost(y: np.ndarray, bkps: list[int], pen: float) -> float:
    """Penalised L2 cost of a segmentation."""
    edges = [0, *bkps]
    sse = sum(float(((y[a:b] - y[a:b].mean()) ** 2).sum()) for a, b in itertools.pairwise(edges))
    return sse + pen * (len(bkps) - 1)


def best_of(fn: Callable[[], list[int]], repeat: int) -> tuple[float, list[int]]:
    """Best wall time of ``repeat`` calls, and the answer."""
    times, out = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    print("| signal | n | fast bkps | exact bkps | same | cost excess | fast s | exact s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, make, n in CASES:
        y = make(n, np.random.default_rng(2))
        sigma = float(np.median(np.abs(np.diff(y)))) / 0.6745 / np.sqrt(2)
        pen = 3 * sigma**2 * np.log(n)
        t_fast, fast = best_of(lambda y=y, pen=pen: fast_breakpoints(y, pen), 3)
        t_exact, exact = best_of(lambda y=y, pen=pen: pelt_l2(y, pen, 2), 1)
        same = len(fast) == len(exact) and all(abs(a - b) <= 3 for a, b in zip(fast, exact, strict=True))
        excess = (cost(y, fast, pen) - cost(y, exact, pen)) / cost(y, exact, pen)
        print(
            f"| {name} | {n:,} | {len(fast) - 1} | {len(exact) - 1} | {'yes' if same else 'no'} "
            f"| {excess:.3%} | {t_fast:.4f} | {t_exact:.3f} |"
        )


if __name__ == "__main__":
    main()
