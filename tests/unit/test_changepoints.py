"""ChangepointDetector: level steps are found at their step; smooth training curves give none."""

from __future__ import annotations

import numpy as np
import pytest

from logdoctor.detectors.changepoints import ChangepointDetector
from logdoctor.model import Severity
from tests.unit.synth import healthy, make_run, running_average, warmup_cosine


def loss_changes(loss: np.ndarray, **cols: np.ndarray) -> list:
    return [f for f in ChangepointDetector().analyze(make_run(loss, **cols)).findings if f.code == "LD301"]


@pytest.mark.parametrize("seed", range(3))
def test_lr_drop_step_is_found(seed: int) -> None:
    loss = healthy(4000, seed, noise=0.05)
    loss[2500:] *= 0.8
    (f,) = loss_changes(loss)
    assert abs(f.first_step - 2501) <= 3 and f.severity == Severity.INFO
    ev = f.evidence
    assert ev["relative_change"] == pytest.approx(-0.2, abs=0.03) and ev["delta_sigma"] < -3
    assert ev["level_before"] > ev["level_after"]


def test_resume_jump_up_is_a_warning() -> None:
    loss = healthy(3000, 7, noise=0.03)
    loss[1800:] *= 1.4 * np.exp(-np.arange(1200) / 400) + (1 - np.exp(-np.arange(1200) / 400))
    det = ChangepointDetector().analyze(make_run(loss))
    (f,) = det.findings
    assert abs(f.first_step - 1801) <= 3 and f.severity == Severity.WARNING
    assert det.artifacts["changepoints"] == (f.first_step,)


@pytest.mark.parametrize("seed", range(4))
def test_healthy_decay_has_no_changepoint(seed: int) -> None:
    assert loss_changes(healthy(5000, seed, tau=150 + 100 * seed, noise=0.05)) == []


@pytest.mark.parametrize("curve", [warmup_cosine(5000, 8), running_average(5000, 9, epoch=1000)])
def test_confounders_have_no_warning(curve: np.ndarray) -> None:
    assert [f for f in loss_changes(curve) if f.severity >= Severity.WARNING] == []


def test_short_excursion_is_not_a_regime() -> None:
    loss = healthy(5000, 10, noise=0.03)
    loss[3000:3008] *= 1.3  # an 8-row bump: spike territory
    assert loss_changes(loss) == []


def test_accuracy_level_change_gives_ld302() -> None:
    rng = np.random.default_rng(11)
    acc = np.clip(0.7 + rng.normal(0, 0.02, 3000), 0, 1)
    acc[2000:] -= 0.15
    det = ChangepointDetector().analyze(make_run(healthy(3000, 11), acc=acc))
    (f,) = [f for f in det.findings if f.code == "LD302"]
    assert abs(f.first_step - 2001) <= 3 and f.evidence["level_after"] == pytest.approx(0.55, abs=0.02)


def test_million_step_input_runs_block_search() -> None:
    loss = healthy(200_000, 12, tau=20_000, noise=0.05)
    loss[150_000:] *= 0.85
    (f,) = loss_changes(loss)
    assert abs(f.first_step - 150_001) <= 5
