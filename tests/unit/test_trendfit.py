"""The trend of a long run by its normal equations (diagnosis/trendfit.py) agrees with lstsq to 1e-9.

Below ``BATCHED_ROWS`` rows detrend keeps lstsq (fixtures, real logs, gold files: check.sh, bit for
bit); these tests lower the threshold to compare both methods on the same inputs.
"""

from __future__ import annotations

import numpy as np
import pytest

from logdoctor.diagnosis import lengthstats as ls
from logdoctor.diagnosis import trendfit

#: The stated tolerance: fitted values within 1e-9 of the loss's scale (max |loss|).
TOL = 1e-9


def _losses(n: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(n)
    steps = np.arange(1, n + 1)
    decay = 2.0 + 8.0 / np.sqrt(steps / 10.0)
    spiky = decay + rng.normal(0, 0.05, n)
    spiky[rng.integers(0, n, n // 50)] += 30.0  # outliers: the second fit weighs them 0
    with_nan = decay + rng.normal(0, 0.05, n)
    with_nan[::37] = np.nan
    resumed = np.r_[steps[: n // 2], steps[n // 4 : n // 4 + n - n // 2]]  # steps repeat after a resume
    return [
        ("noisy decay", steps, decay + rng.normal(0, 0.05, n)),
        ("spikes", steps, spiky),
        ("NaN rows", steps, with_nan),
        ("ties", steps, np.round(decay + rng.normal(0, 0.05, n), 1)),
        ("constant", steps, np.full(n, 3.0)),
        ("huge", steps, 1e12 * (decay + rng.normal(0, 0.05, n))),
        ("resumed steps", resumed, decay + rng.normal(0, 0.05, n)),
        ("strided", steps * 50 + 10_000, decay + rng.normal(0, 0.05, n)),
    ]


@pytest.mark.parametrize("case", range(8))
def test_detrend_by_normal_equations_agrees_with_lstsq(case: int, monkeypatch: pytest.MonkeyPatch) -> None:
    name, steps, loss = _losses(5000)[case]
    monkeypatch.setattr(trendfit, "BATCHED_ROWS", 10**9)
    want = ls.detrend(steps, loss)
    monkeypatch.setattr(trendfit, "BATCHED_ROWS", 0)
    calls: list[int] = []
    real = trendfit.fit
    monkeypatch.setattr(trendfit, "fit", lambda *a: calls.append(1) or real(*a))
    got = ls.detrend(steps, loss)
    assert len(calls) == 2, name  # both fits went through the normal equations
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    scale = np.nanmax(np.abs(loss))
    assert np.nanmax(np.abs(got - want)) <= TOL * scale, name


def test_a_long_run_takes_the_normal_equations_and_a_short_one_lstsq(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = trendfit.fit
    monkeypatch.setattr(trendfit, "fit", lambda *a: calls.append(1) or real(*a))
    _, steps, loss = _losses(500)[0]
    ls.detrend(steps, loss)
    assert not calls
    monkeypatch.setattr(trendfit, "BATCHED_ROWS", 400)
    ls.detrend(steps, loss)
    assert len(calls) == 2


def test_nearly_dependent_columns_are_left_to_lstsq() -> None:
    u = np.linspace(1.0, 1.0 + 1e-7, 1000)  # the powers of u are nearly the same column
    basis = np.stack([u**3, u**2, u, np.ones_like(u)], axis=1)
    assert trendfit.fit(basis, u.copy()) is None
    ok = np.stack([u * 0 + np.linspace(-1, 1, 1000), np.ones_like(u)], axis=1)
    coef = trendfit.fit(ok, 2.0 * ok[:, 0] + 1.0)
    assert coef is not None and np.allclose(coef, [2.0, 1.0], rtol=0, atol=1e-14)


def test_zero_weights_drop_rows() -> None:
    rng = np.random.default_rng(2)
    x = np.linspace(-1, 1, 200)
    basis = np.stack([x, np.ones_like(x)], axis=1)
    y = 3.0 * x - 1.0 + rng.normal(0, 0.01, 200)
    w = np.ones(200)
    w[::3] = 0.0
    y_bad = y.copy()
    y_bad[::3] = 1e6  # dropped rows: their values must not matter
    want = np.linalg.lstsq(basis * w[:, None], y_bad * w, rcond=None)[0]
    got = trendfit.fit(basis, y_bad, w)
    assert got is not None and np.allclose(got, want, rtol=TOL, atol=TOL)
