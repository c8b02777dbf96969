"""SpikeDetector: finds loss spikes at their steps; silent on healthy curves and confounders."""

from __future__ import annotations

import numpy as np
import pytest

from logdoctor.detectors.spikes import SpikeDetector, interval_regularity
from tests.unit.synth import healthy, make_run, running_average, warmup_cosine


def codes_of(run_findings: tuple) -> list[str]:
    return [f.code for f in run_findings]


def test_story_spikes_are_found_at_their_steps() -> None:
    loss = healthy(2000, 1, start=3.0, floor=1.0, tau=80, noise=0.05)
    loss[253], loss[257] = 4.6, 6.4  # steps 254 and 258 (steps are 1-based)
    det = SpikeDetector().analyze(make_run(loss))
    spikes = [f for f in det.findings if f.code == "LD101"]
    assert sorted(f.first_step for f in spikes) == [254, 258]
    top = spikes[0]
    assert top.first_step == 258 and top.evidence["ratio"] > 4 and top.evidence["robust_z"] > 10
    assert top.line == 257 + 10 and top.evidence["width_rows"] == 1
    assert det.artifacts["spike_steps"] == (254, 258)


def test_wide_spike_reports_its_width() -> None:
    loss = healthy(3000, 2, noise=0.03)
    loss[1500:1504] *= 3.0
    (f,) = [f for f in SpikeDetector().analyze(make_run(loss)).findings if f.code == "LD101"]
    assert (f.first_step, f.last_step, f.evidence["width_rows"]) == (1501, 1504, 4)


@pytest.mark.parametrize("seed", range(4))
def test_healthy_curves_and_steep_start_give_no_spikes(seed: int) -> None:
    loss = healthy(3000, seed, start=10.0, floor=3.0, tau=60, noise=0.05)
    assert SpikeDetector().analyze(make_run(loss)).findings == ()


@pytest.mark.parametrize("curve", [warmup_cosine(4000, 3), running_average(4000, 4)])
def test_confounders_give_no_spikes(curve: np.ndarray) -> None:
    assert SpikeDetector().analyze(make_run(curve)).findings == ()


def test_noisy_single_batch_loss_gives_few_findings() -> None:
    rng = np.random.default_rng(5)
    loss = healthy(5000, 5, noise=0.0) * rng.gamma(20, 1 / 20, 5000)  # skewed per-batch noise
    assert len(SpikeDetector().analyze(make_run(loss)).findings) <= 2


def test_findings_are_capped_and_summarised_with_a_regular_period() -> None:
    loss = healthy(6000, 6, noise=0.02)
    loss[300::100] *= 2.5  # 57 spikes every 100 steps
    det = SpikeDetector(max_findings=10).analyze(make_run(loss, steps_per_epoch=100))
    assert codes_of(det.findings).count("LD101") == 10
    (summary,) = [f for f in det.findings if f.code == "LD103"]
    ev = summary.evidence
    assert ev["n_spikes"] == 57 and ev["regular"] is True and ev["period"] == 100.0
    assert ev["regularity_p_value"] < 0.01 and ev["epoch_ratio"] == 1.0


def test_poisson_spike_times_are_not_regular() -> None:
    rng = np.random.default_rng(7)
    times = np.sort(rng.choice(100_000, 40, replace=False))
    cv, p, _ = interval_regularity(times)
    assert 0.6 < cv < 1.4 and p > 0.05


def test_grad_norm_spikes_with_loss_spikes_give_ld102() -> None:
    loss = healthy(3000, 8, noise=0.03)
    grad = np.exp(np.random.default_rng(9).normal(0, 0.05, 3000))
    for i in (700, 1500, 2300):
        loss[i] *= 10  # a 3x step is within Student-t(3) noise over 3000 rows (docs/detectors.md)
    grad[700] *= 10
    grad[1501] *= 10
    det = SpikeDetector().analyze(make_run(loss, grad_norm=grad))
    (f,) = [f for f in det.findings if f.code == "LD102"]
    assert f.first_step == 701 and f.evidence["n_with_grad_spike"] == 2
    assert f.evidence["fraction_with_grad_spike"] == pytest.approx(2 / 3, abs=1e-3)


def test_downward_outliers_are_not_spikes() -> None:
    loss = healthy(2000, 10, noise=0.03)
    loss[1000] /= 3
    assert SpikeDetector().analyze(make_run(loss)).findings == ()


def test_grad_norm_spike_without_loss_spike_is_ld104_info() -> None:
    loss = healthy(3000, 11, noise=0.03)
    grad = np.exp(np.random.default_rng(12).normal(0, 0.05, 3000))
    grad[900] *= 200  # the loss stays calm (clipping)
    grad[2000] *= 50
    loss[2000] *= 3  # this one comes with a loss spike: not LD104 (and, alone, not LD102 either)
    det = SpikeDetector().analyze(make_run(loss, grad_norm=grad))
    (f,) = [f for f in det.findings if f.code == "LD104"]
    assert f.severity.label == "info" and f.first_step == 901
    assert f.evidence["n_grad_spikes"] == 1 and f.evidence["max_ratio"] > 100
    assert [g.first_step for g in det.findings if g.code == "LD102"] == []  # one blip is not instability


def test_single_noisy_step_with_a_grad_blip_is_not_a_warning() -> None:
    """Issue 20: one noisy step (within heavy-tailed noise for the run's length) is not a spike
    warning, and one grad-norm blip with it is not "optimisation instability"."""
    rng = np.random.default_rng(21)
    loss = healthy(2000, 21, noise=0.03)
    grad = np.exp(rng.normal(0, 0.05, 2000))
    loss[1200] *= 1.6  # robust z ~ 16: a Student-t(4) run of 2000 rows gets there in > 1% of runs
    grad[1200] *= 3
    det = SpikeDetector().analyze(make_run(loss, grad_norm=grad))
    assert [(f.code, f.severity.label) for f in det.findings] == [("LD101", "info")]
    assert det.findings[0].evidence["null_p_value"] > 0.01


def test_moderate_grad_norm_wobble_is_silent() -> None:
    grad = np.exp(np.random.default_rng(13).normal(0, 0.2, 3000))
    grad[1500] *= 4  # 4x: notable but below the 10x floor
    assert SpikeDetector().analyze(make_run(healthy(3000, 13), grad_norm=grad)).findings == ()
