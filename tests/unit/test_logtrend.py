"""logtrend: LD201's robust spline trend in log-steps follows a loss's fall and keeps an epoch sawtooth."""

from __future__ import annotations

import numpy as np
import pytest

from logdoctor.detectors import logtrend
from logdoctor.detectors.periodicity import PeriodicityDetector
from tests.unit.synth import healthy, make_run, warmup_cosine


def _falls(n: int) -> dict[str, np.ndarray]:
    """Noise-free log-loss curves of the shapes the bench draws (bench/ld201_lowfreq.py)."""
    t = np.arange(n, dtype=np.float64)
    warm = 0.1 * n
    lr = np.where(t < warm, (t + 1) / warm, 0.5 * (1 + np.cos(np.pi * (t - warm) / (n - warm))))
    return {
        "fast exponential": np.log(1.0 + 5.0 * np.exp(-t / (0.05 * n))),
        "slow exponential": np.log(1.0 + 5.0 * np.exp(-t / (0.5 * n))),
        "power law": np.log(1.0 + 5.0 * (10.0 / (t + 10.0)) ** 1.5),
        "warm-up, cosine": np.log(1.0 + 5.0 * np.exp(-4.0 * np.cumsum(lr) / lr.sum())),
    }


@pytest.mark.parametrize("name", list(_falls(800)))
def test_the_spline_follows_a_falling_loss_to_well_below_the_noise(name: str) -> None:
    y = _falls(800)[name]
    resid = y - logtrend.trend(np.arange(800.0), y)
    # rms misfit past the first 5% (the knee) under a sixth of the bench's 0.03 step noise (the fast
    # exponential, a 6x fall within 5% of the run, is the worst: 0.0031; the rest <= 0.0004)
    assert np.sqrt(np.mean(resid[40:] ** 2)) < 0.005 and np.abs(resid).max() < 0.05


def test_a_sawtooth_of_four_epochs_on_a_steep_fall_survives_the_detrend() -> None:
    n, epoch, amp = 800, 200, 0.1
    t = np.arange(n, dtype=np.float64)
    phase = (t % epoch) / epoch
    y = np.log(1.0 + 5.0 * np.exp(-t / (0.5 * n))) + amp * phase
    resid = y - logtrend.trend(t, y)
    # the residual's slope on the in-epoch phase (the sawtooth's amplitude), late epochs (past 25%)
    late = t >= 0.25 * n
    slope = np.polyfit(phase[late], resid[late], 1)[0]
    assert slope > 0.85 * amp


def test_a_loss_spike_does_not_bend_the_fit() -> None:
    t = np.arange(600, dtype=np.float64)
    y = np.log(2.0 + 6.0 * np.exp(-t / 150.0)) + np.random.default_rng(0).normal(0, 0.02, 600)
    clean = logtrend.trend(t, y)
    y[300:303] += 3.0  # a three-step spike, 150 sigma
    assert np.abs(logtrend.trend(t, y) - clean).max() < 0.01


@pytest.mark.parametrize("dof", [1, 2, 3, 8, 12])
def test_evaluate_equals_the_basis_times_the_coefficients(dof: int) -> None:
    rng = np.random.default_rng(dof)
    u = np.concatenate(([0.0], np.sort(rng.uniform(0, 1, 300)), [1.0]))
    beta = rng.normal(size=dof)
    np.testing.assert_allclose(logtrend.evaluate(u, beta), logtrend.basis(u, dof) @ beta, atol=1e-12)


def test_long_runs_are_fitted_on_block_medians_to_the_same_trend() -> None:
    n = 3 * logtrend.MAX_BLOCKS + 7
    t = np.arange(n, dtype=np.float64) * 2  # logged every 2 steps
    y = np.log(2.0 + 6.0 * np.exp(-t / (0.1 * t[-1]))) + np.random.default_rng(1).normal(0, 0.02, n)
    blocked = logtrend.trend(t, y)
    u = logtrend.warp(t)
    full = logtrend.basis(u, 8) @ logtrend.huber_fit(y, logtrend.basis(u, 8))
    assert np.abs(blocked - full).max() < 0.005


def test_degenerate_inputs() -> None:
    assert logtrend.trend(np.zeros(0), np.zeros(0)).size == 0
    np.testing.assert_allclose(logtrend.trend(np.arange(5.0), np.full(5, 2.0)), 2.0)
    assert np.all(logtrend.warp(np.full(4, 7.0)) == 0)  # one step repeated: no span to warp


def test_the_detector_with_the_spline_finds_a_four_epoch_sawtooth_on_a_short_run() -> None:
    n, epoch = 400, 100
    t = np.arange(n)
    rng = np.random.default_rng(3)
    loss = (1.0 + 5.0 * np.exp(-t / 200)) * np.exp(0.1 * (t % epoch) / epoch + rng.normal(0, 0.03, n))
    (f,) = PeriodicityDetector(trend_dof=8).analyze(make_run(loss, steps_per_epoch=epoch)).findings
    assert f.code == "LD201" and abs(f.evidence["period"] / epoch - 1) < 0.05


@pytest.mark.parametrize("curve", [warmup_cosine(4000, 3), healthy(4000, 4), healthy(300, 5, tau=30)])
def test_the_detector_with_the_spline_is_silent_on_healthy_curves(curve: np.ndarray) -> None:
    assert PeriodicityDetector(trend_dof=8).analyze(make_run(curve)).findings == ()
