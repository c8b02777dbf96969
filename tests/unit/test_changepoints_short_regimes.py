"""The changepoint search on the hard case: many short regimes, against ruptures' exact KernelCPD.

Block means blur regimes shorter than a few blocks: before dense regions were searched exactly,
the fast search found 176 of 182 breakpoints at n = 5,000 and 1,232 of 3,521 at n = 100,000
(regimes of 5-30 rows). docs/detectors.md states the measured limits that remain.
"""

from __future__ import annotations

import numpy as np
import pytest
import ruptures as rpt

from logdoctor.detectors.cpsearch import fast_breakpoints


def short_regimes(n: int, shortest: int, longest: int, seed: int) -> np.ndarray:
    """Piecewise-constant levels N(0, 3) lasting ``shortest``-``longest`` rows, plus N(0, 1) noise."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(shortest, longest + 1, size=n // shortest + 1)
    levels = np.repeat(rng.normal(0.0, 3.0, size=lengths.size), lengths)[:n]
    return levels + rng.normal(0.0, 1.0, size=n)


def _exact(y: np.ndarray, pen: float) -> list[int]:
    return [int(k) for k in rpt.KernelCPD(kernel="linear", min_size=2, jump=1).fit(y.reshape(-1, 1)).predict(pen=pen)]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(("n", "shortest", "longest"), [(5000, 5, 30), (6000, 10, 40), (8000, 20, 80)])
def test_many_short_regimes_give_the_exact_breakpoints(n: int, shortest: int, longest: int, seed: int) -> None:
    y = short_regimes(n, shortest, longest, seed)
    pen = 3.0 * np.log(n)
    assert fast_breakpoints(y, pen) == _exact(y, pen)


def test_few_long_regimes_stay_exact() -> None:
    y = short_regimes(8000, 1000, 3000, seed=5)
    pen = 3.0 * np.log(8000)
    fast, exact = fast_breakpoints(y, pen), _exact(y, pen)
    assert len(fast) == len(exact) and max(abs(a - b) for a, b in zip(fast, exact, strict=True)) <= 3
