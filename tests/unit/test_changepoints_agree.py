"""The fast block-and-refine changepoint search agrees with ruptures' exhaustive PELT (L2)."""

from __future__ import annotations

import numpy as np
import pytest
import ruptures as rpt

from logdoctor.detectors.cpsearch import fast_breakpoints


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(("n", "max_blocks"), [(400, 400), (600, 60)])
def test_fast_search_matches_exhaustive_pelt(seed: int, n: int, max_blocks: int) -> None:
    signal, truth = rpt.pw_constant(n, 1, 4, noise_std=1.0, seed=seed)
    y = signal[:, 0]
    pen = 3.0 * np.log(n)
    exact = rpt.Pelt(model="l2", min_size=2, jump=1).fit(y).predict(pen=pen)
    fast = fast_breakpoints(y, pen, max_blocks=max_blocks)
    assert len(fast) == len(exact), (truth, exact, fast)
    assert max(abs(a - b) for a, b in zip(fast, exact, strict=True)) <= 3


def test_exact_when_no_aggregation_is_needed() -> None:
    signal, _ = rpt.pw_constant(300, 1, 3, noise_std=0.5, seed=42)
    y = signal[:, 0]
    pen = 2.0 * np.log(300)
    assert fast_breakpoints(y, pen) == rpt.Pelt(model="l2", min_size=2, jump=1).fit(y).predict(pen=pen)


@pytest.mark.parametrize("seed", range(20))
def test_fast_search_matches_exact_kernel_search_on_larger_inputs(seed: int) -> None:
    # KernelCPD(kernel="linear", jump=1) solves the same penalised L2 problem exactly, in C.
    signal, _ = rpt.pw_constant(3000, 1, 4, noise_std=1.0, seed=seed)
    y = signal[:, 0]
    pen = 3.0 * np.log(3000)
    exact = rpt.KernelCPD(kernel="linear", min_size=2, jump=1).fit(y.reshape(-1, 1)).predict(pen=pen)
    fast = fast_breakpoints(y, pen, max_blocks=100)
    assert len(fast) == len(exact)
    assert max(abs(a - b) for a, b in zip(fast, exact, strict=True)) <= 3
    assert all(type(b) is int for b in fast)
