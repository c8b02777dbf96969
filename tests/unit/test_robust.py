"""Unit tests of the shared robust numeric helpers."""

from __future__ import annotations

import numpy as np

from logdoctor.detectors import robust


def test_rolling_median_ignores_isolated_spikes_and_follows_monotone_curves() -> None:
    x = np.linspace(10.0, 1.0, 500)
    y = x.copy()
    y[100] = 50.0
    med = robust.rolling_median(y, 11)
    assert np.allclose(med, x, atol=0.02)


def test_noise_sigma_recovers_gaussian_sigma_despite_trend() -> None:
    rng = np.random.default_rng(0)
    x = np.linspace(5, 0, 20000) + rng.normal(0, 0.2, 20000)
    assert abs(robust.noise_sigma(x) - 0.2) < 0.01


def test_trend_on_blocks_matches_direct_median_on_monotone_curve() -> None:
    x = 3 + 7 * np.exp(-np.arange(100_000) / 5000)
    tr = robust.trend(x, 30_000, max_blocks=1000)
    assert np.max(np.abs(tr - x)) < 0.1  # within one block of the edge, the first block median


def test_runs_and_sustained() -> None:
    mask = np.array([0, 1, 1, 0, 1, 1, 1, 1, 0, 1], dtype=bool)
    starts, ends = robust.runs_of(mask)
    assert starts.tolist() == [1, 4, 9] and ends.tolist() == [3, 8, 10]
    assert robust.sustained(mask, 3).tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 0, 0]


def test_block_reduce_keeps_short_last_block() -> None:
    out, size = robust.block_reduce(np.arange(10, dtype=float), 3, how="mean")
    assert size == 4 and out.tolist() == [1.5, 5.5, 8.5]


def test_spearman_detects_monotone_relation() -> None:
    a = np.arange(50, dtype=float)
    rho, p = robust.spearman(a, a**2)
    assert abs(rho - 1.0) < 1e-12 and p < 1e-10
    assert robust.spearman(a[:3], a[:3]) == (0.0, 1.0)
