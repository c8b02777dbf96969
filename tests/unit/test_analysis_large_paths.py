"""Faster numerics above a size threshold agree with the exact method to a stated tolerance (issue 33 point 1).

Below each threshold the exact method runs (every fixture, real log and gold file); above it the
faster one, whose numbers may differ in the last digits only.
"""

from __future__ import annotations

import numpy as np
import pytest

from logdoctor.diagnosis import lengthstats


def _loss(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A decaying loss with noise, spikes, an epoch sawtooth and NaNs, logged every 2 steps."""
    rng = np.random.default_rng(seed)
    steps = np.arange(1, 2 * n + 1, 2, dtype=np.int64)
    loss = 2.0 + 3.0 * np.exp(-steps / 40_000) + 0.05 * ((steps % 5_000) / 5_000) + rng.normal(0, 0.03, n)
    loss[rng.integers(0, n, 40)] += 5.0
    loss[rng.integers(0, n, 10)] = np.nan
    return steps, loss


def test_detrend_above_the_threshold_agrees_with_the_svd_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    steps, loss = _loss(150_000, 0)
    fast = lengthstats.detrend(steps, loss)
    monkeypatch.setattr(lengthstats, "FAST_FIT_ROWS", 10**9)
    exact = lengthstats.detrend(steps, loss)
    ok = np.isfinite(exact)
    assert np.array_equal(ok, np.isfinite(fast))
    trend_exact, trend_fast = loss[ok] - exact[ok], loss[ok] - fast[ok]
    assert np.max(np.abs(trend_fast - trend_exact)) <= 1e-9 * np.max(np.abs(trend_exact))


def test_detrend_below_the_threshold_is_the_svd_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Control: a small series never takes the normal equations (its numbers are the exact path's)."""
    steps, loss = _loss(2_000, 3)
    calls: list[int] = []
    real = np.linalg.solve
    monkeypatch.setattr(lengthstats.np.linalg, "solve", lambda a, b: calls.append(1) or real(a, b))
    lengthstats.detrend(steps, loss)
    assert calls == []
    monkeypatch.setattr(lengthstats, "FAST_FIT_ROWS", 1_000)
    lengthstats.detrend(steps, loss)
    assert calls == [1, 1]
