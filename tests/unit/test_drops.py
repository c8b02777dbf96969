"""DropDetector: accuracy drops (LD401), plateaus (LD402) and loss rises (LD403) in context."""

from __future__ import annotations

import numpy as np
import pytest

from logdoctor.detectors.drops import DropDetector
from tests.unit.synth import healthy, make_run, warmup_cosine


def by_code(loss: np.ndarray, code: str, **cols: np.ndarray) -> list:
    return [f for f in DropDetector().analyze(make_run(loss, **cols)).findings if f.code == code]


def rising_acc(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(0.65 * (1 - np.exp(-np.arange(n) / (n / 8))) + rng.normal(0, 0.03, n), 0, 1)


def test_sustained_accuracy_fall_is_found() -> None:
    acc = rising_acc(5000, 0)
    acc[3000:3600] -= 0.2  # 0.6 -> 0.4 for 600 steps
    (f,) = by_code(healthy(5000, 0), "LD401", acc=acc)
    assert 3000 <= f.first_step <= 3100 and f.evidence["drop"] == pytest.approx(0.2, abs=0.04)
    assert f.evidence["drop_sigmas"] > 4


def test_early_noise_in_low_accuracy_is_not_a_drop() -> None:
    rng = np.random.default_rng(1)
    acc = np.clip(np.r_[0.04 + rng.normal(0, 0.01, 400), rising_acc(52_000, 1)[400:]], 0, 1)
    assert by_code(healthy(52_000, 1, tau=5000), "LD401", acc=acc) == []


def test_quantised_single_batch_accuracy_is_not_a_drop() -> None:
    rng = np.random.default_rng(2)
    acc = rng.integers(0, 5, 200) / 4  # 4-sample batches: 0, .25, ... 1
    acc[0] = 1.0
    assert by_code(healthy(200, 2), "LD401", acc=acc) == []


def test_flat_run_is_a_plateau_info() -> None:
    loss = 3.0 * np.exp(np.random.default_rng(3).normal(0, 0.02, 1000))
    (f,) = by_code(loss, "LD402")
    assert f.severity.label == "info" and f.evidence["scope"] == "run" and abs(f.evidence["improvement"]) < 0.02


def test_stalled_tail_is_a_plateau_but_slow_late_decrease_is_not() -> None:
    t = np.arange(6000)
    noise = np.exp(np.random.default_rng(4).normal(0, 0.02, 6000))
    stalled = np.where(t < 3000, 2 + 8 * np.exp(-t / 400), 2 + 8 * np.exp(-3000 / 400)) * noise
    (f,) = by_code(stalled, "LD402")
    assert f.evidence["scope"] == "tail"
    assert by_code(healthy(6000, 4, tau=2500), "LD402") == []
    assert by_code(warmup_cosine(6000, 4), "LD402") == []


def test_sustained_rise_is_found_but_not_a_divergence() -> None:
    loss = healthy(4000, 5)
    loss[2500:3200] *= 1.25
    (f,) = by_code(loss, "LD403")
    assert 2500 <= f.first_step <= 2600 and f.evidence["rise_ratio"] == pytest.approx(1.25, abs=0.05)
    loss[2500:3200] *= 2.0  # now 2.5x: a divergence, left to LD002
    assert by_code(loss, "LD403") == []


@pytest.mark.parametrize("seed", range(3))
def test_healthy_runs_have_no_trend_findings(seed: int) -> None:
    # still improving at the end (a converged synthetic curve would rightly be a tail plateau)
    loss = healthy(5000, seed, tau=1500)
    assert DropDetector().analyze(make_run(loss, acc=rising_acc(5000, seed))).findings == ()


@pytest.mark.parametrize("seed", range(10))
def test_pure_noise_has_no_drop_or_rise(seed: int) -> None:
    # The running best of a noisy curve is an extreme value: departures from it must beat that bias.
    rng = np.random.default_rng(seed)
    loss, acc = np.exp(rng.normal(0, 0.3, 1000)), np.clip(0.5 + rng.normal(0, 0.1, 1000), 0, 1)
    found = {f.code for f in DropDetector().analyze(make_run(loss, acc=acc)).findings}
    assert not found & {"LD401", "LD403"}


def test_a_stall_early_in_a_long_planned_run_is_not_a_plateau() -> None:
    """The story: 400 steps into a 52,000-step run the loss has settled; that is not a plateau."""
    import dataclasses

    t = np.arange(6000)
    noise = np.exp(np.random.default_rng(4).normal(0, 0.02, 6000))
    stalled = np.where(t < 3000, 2 + 8 * np.exp(-t / 400), 2 + 8 * np.exp(-3000 / 400)) * noise
    run = make_run(stalled)
    early = dataclasses.replace(run, meta=dataclasses.replace(run.meta, total_steps=520_000))
    assert [f for f in DropDetector().analyze(early).findings if f.code == "LD402"] == []
    late = dataclasses.replace(run, meta=dataclasses.replace(run.meta, total_steps=6_000))
    assert [f.code for f in DropDetector().analyze(late).findings if f.code == "LD402"] == ["LD402"]
