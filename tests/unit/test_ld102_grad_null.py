"""LD102 weighs a grad-norm blow-up against the grad norm's own heavy-tailed null, and the chance of
coincidence against the grad norm's background spike rate (rows away from the loss spikes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from logdoctor import pipeline
from logdoctor.detectors.spikes import SpikeDetector
from tests.reports import report_of
from tests.unit.synth import healthy, make_run

N = 2000
AT = (500, 1100, 1600)


def _run(grad_factor: float, seed: int, spiky_grad: bool = False) -> tuple[object, list[str]]:
    rng = np.random.default_rng(seed)
    loss = healthy(N, seed, noise=0.03)
    grad = np.exp(rng.normal(0, 0.05, N))
    if spiky_grad:  # a grad norm that spikes on 10% of rows anyway
        grad[rng.choice(N, N // 10, replace=False)] *= 3
    for s in AT:
        loss[s] *= 1.6  # robust z ~ 16: inside the heavy-tailed loss null for 2000 rows
        grad[s - 1] *= grad_factor  # the grad norm blows up a row before
    det = SpikeDetector().analyze(make_run(loss, grad_norm=grad))
    return det, [f"{f.code}:{f.severity.label}" for f in det.findings]


def test_loss_bumps_after_grad_blowups_are_instability() -> None:
    det, codes = _run(40.0, 1)
    (f,) = [f for f in det.findings if f.code == "LD102"]  # type: ignore[attr-defined]
    assert f.severity.label == "warning"
    assert f.evidence["n_with_grad_spike"] == 3
    assert f.evidence["grad_null_p_value"] <= 0.01 and f.evidence["chance_p_value"] <= 0.01
    assert "LD101:warning" not in codes  # the loss bumps alone stay information


def test_hard_batches_with_moderate_grad_bumps_are_not_instability() -> None:
    # a hard batch raises loss and grad norm together: 2x grad (robust z ~ 10-15) is within the
    # grad norm's heavy-tailed null, as in the real pathology_overfit run (z 7-8)
    _, codes = _run(2.0, 2)
    assert not [c for c in codes if c.startswith("LD102")]


def test_blowups_on_a_grad_norm_that_spikes_everywhere_are_chance() -> None:
    _, codes = _run(40.0, 3, spiky_grad=True)
    assert not [c for c in codes if c.startswith("LD102")]


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def test_simulated_instability_is_reported() -> None:
    rep = report_of(str(FIXTURES / "sim" / "instability.log"))
    (f,) = [f for f in rep.findings if f.code == "LD102"]
    assert f.severity.label == "warning" and rep.status == "warning"
    assert f.evidence["grad_null_p_value"] <= 0.01 and f.evidence["chance_p_value"] <= 0.01


@pytest.mark.parametrize("name", ["pathology_overfit.log", "pathology_lr_jump.log", "pathology_healthy.log"])
def test_real_hard_batch_coincidences_are_not_instability(name: str) -> None:
    # pathology_overfit: 2 of 2 loss spikes with grad-norm z 7-8 (chance p 0.001 under independence)
    rep = pipeline.analyze(pipeline.load(str(FIXTURES / "realruns" / name)))
    assert not [f for f in rep.findings if f.code == "LD102"]
