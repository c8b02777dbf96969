"""PeriodicityDetector: finds a jittered epoch period, tests it, and stays silent on noise."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import lfilter

from logdoctor.detectors.periodicity import PeriodicityDetector, epoch_relation
from tests.unit.synth import healthy, make_run, running_average, sawtooth, warmup_cosine


def test_jittered_sawtooth_period_is_found_and_related_to_the_epoch() -> None:
    loss, _ = sawtooth(6000, 0, period=200, amp=0.1, jitter=8)
    det = PeriodicityDetector().analyze(make_run(loss, steps_per_epoch=200))
    (f,) = det.findings
    ev = f.evidence
    assert f.code == "LD201" and abs(ev["period"] - 200) < 4
    assert ev["p_value"] < 1e-6 and ev["acf_at_period"] > 0.1 and ev["power_ratio"] > 0.02
    assert abs(ev["epoch_ratio"] - 1.0) < 0.02 and ev["steps_per_epoch"] == 200 and ev["n_cycles"] > 25
    assert det.artifacts["period"] == pytest.approx(ev["period"], abs=0.01)
    assert 0 < len(det.artifacts["periodogram_period"]) <= 2000


def test_uneven_steps_use_lomb_scargle() -> None:
    loss, _ = sawtooth(4500, 1, period=240, amp=0.15, jitter=0)
    rng = np.random.default_rng(1)
    keep = np.sort(rng.choice(4500, 1500, replace=False))  # logged at irregular steps
    det = PeriodicityDetector().analyze(make_run(loss[keep], steps=keep + 1))
    (f,) = det.findings
    assert f.evidence["method"] == "lomb-scargle" and abs(f.evidence["period"] - 240) < 5


def test_long_runs_downsample_the_periodogram_artifact() -> None:
    loss, _ = sawtooth(50_000, 2, period=500, amp=0.08, jitter=10)
    det = PeriodicityDetector().analyze(make_run(loss))
    assert len(det.artifacts["periodogram_period"]) <= 2000
    assert abs(det.findings[0].evidence["period"] - 500) < 10


@pytest.mark.parametrize("curve", [warmup_cosine(4000, 3), healthy(4000, 4)])
def test_healthy_curves_have_no_period(curve: np.ndarray) -> None:
    assert PeriodicityDetector().analyze(make_run(curve)).findings == ()


def test_running_average_reset_is_periodic_but_only_at_the_epoch() -> None:
    det = PeriodicityDetector().analyze(make_run(running_average(5000, 5, epoch=500)))
    assert [abs(f.evidence["period"] - 500) < 10 for f in det.findings] in ([], [True])


def test_too_short_runs_are_not_analysed() -> None:
    loss, _ = sawtooth(40, 6, period=10)
    assert PeriodicityDetector().analyze(make_run(loss)).findings == ()


def _noise_false_positives(kind: str, seeds: int) -> int:
    det, n, flagged = PeriodicityDetector(), 2000, 0
    t = np.arange(n)
    for seed in range(seeds):
        e = np.random.default_rng(seed).normal(0, 0.05, n)
        if kind == "red":
            e = lfilter([1.0], [1.0, -0.9], e) * 0.3
        loss = (2 + 8 * np.exp(-t / 300)) * np.exp(e)
        flagged += bool(det.analyze(make_run(loss)).findings)
    return flagged


@pytest.mark.parametrize("kind", ["white", "red"])
def test_false_positive_rate_on_noise_is_within_alpha(kind: str) -> None:
    """Runs flagged on pure noise (white, and AR(1) red whose wander can mimic cycles), against the
    detector's alpha: the count must be one that a rate of alpha gives with probability >= 0.001
    (binomial tail), i.e. 300 runs at alpha = 0.001 allow at most 3 flagged, not 21x alpha."""
    from scipy.stats import binom

    seeds, alpha = 300, PeriodicityDetector().alpha
    flagged = _noise_false_positives(kind, seeds)
    assert flagged == 0 or binom.sf(flagged - 1, seeds, alpha) >= 0.001, f"{flagged}/{seeds} at alpha={alpha}"


@pytest.mark.parametrize(
    ("period", "text"),
    [
        (1010.0, "about the epoch length"),
        (2990.0, "about 3 epochs"),
        (251.0, "about 1/4 of the epoch"),
        (46.5, "unrelated to the epoch"),
    ],
)
def test_epoch_relation_wording(period: float, text: str) -> None:
    assert epoch_relation(period, 1000).startswith(text)


@pytest.mark.parametrize("n", [2, 3, 10, 11, 4096, 5001])
def test_numpy_periodogram_equals_scipy(n: int) -> None:
    from scipy import signal

    from logdoctor.detectors.spectral import periodogram

    x = np.random.default_rng(n).normal(size=n)
    f_ref, p_ref = signal.periodogram(x, fs=1.0 / 5.0, detrend=False, scaling="spectrum")
    f, p = periodogram(x, 5.0)
    np.testing.assert_allclose(f, f_ref, rtol=1e-12)
    np.testing.assert_allclose(p, p_ref, rtol=1e-9, atol=1e-15)


def test_small_cycle_below_step_noise_is_information() -> None:
    # build-nanogpt's shape: a ~46-step cycle of <1% peak to peak under ~1.4% per-step noise
    rng = np.random.default_rng(11)
    n = 20000
    t = np.arange(n)
    loss = (3.0 + 2.0 * np.exp(-t / 800)) * np.exp(0.005 * np.sin(2 * np.pi * t / 46.5) + rng.normal(0, 0.013, n))
    found = PeriodicityDetector().analyze(make_run(loss)).findings
    assert [f.code for f in found] == ["LD201"]
    f = found[0]
    assert f.severity.label == "info"
    assert f.evidence["amplitude_rel"] < f.evidence["noise_rel"]
    assert "information" in f.message


def test_cycle_larger_than_step_noise_stays_a_warning() -> None:
    rng = np.random.default_rng(12)
    n = 6000
    t = np.arange(n)
    loss = (3.0 + 2.0 * np.exp(-t / 800)) * np.exp(0.03 * np.sin(2 * np.pi * t / 46.5) + rng.normal(0, 0.013, n))
    found = PeriodicityDetector().analyze(make_run(loss)).findings
    assert [f.code for f in found] == ["LD201"] and found[0].severity.label == "warning"
