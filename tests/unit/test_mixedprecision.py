"""Mixed-precision trouble: skipped iterations (LD020), loss-scale collapse (LD022), zero counters (LD021)."""

from __future__ import annotations

import numpy as np

from logdoctor.detectors.integrity import IntegrityDetector
from logdoctor.detectors.mixedprecision import MixedPrecisionDetector
from tests.unit.synth import healthy, make_run


def test_skipped_iterations_are_reported_with_the_loss_scale() -> None:
    n = 50
    skipped = np.zeros(n)
    skipped[[0, 1, 30]] = [8, 1, 2]
    scale = np.r_[np.full(2, 32768.0), np.full(n - 2, 16384.0)]
    run = make_run(healthy(n, 1), number_of_skipped_iterations=skipped, loss_scale=scale)
    found = MixedPrecisionDetector().analyze(run).findings
    assert [f.code for f in found] == ["LD020"]
    assert found[0].evidence["skipped_total"] == 11
    assert "32,768 to 16,384" in found[0].message


def test_collapsing_loss_scale_is_an_error() -> None:
    n = 60
    scale = 2.0 ** np.r_[np.full(20, 16.0), np.linspace(16, -4, 20).round(), np.full(20, -4.0)]
    run = make_run(healthy(n, 2), loss_scale=scale)
    found = MixedPrecisionDetector().analyze(run).findings
    assert [f.code for f in found] == ["LD022"]
    assert found[0].severity.label == "error"


def test_wandering_fairseq_scale_is_not_a_collapse() -> None:
    rng = np.random.default_rng(4)
    scale = 2.0 ** rng.integers(-1, 4, 200)  # 0.5-8, up and down: fairseq's healthy hubert run
    run = make_run(healthy(200, 4), loss_scale=scale.astype(float))
    assert not MixedPrecisionDetector().analyze(run).findings


def test_healthy_fp16_run_is_silent() -> None:
    n = 60
    scale = np.r_[np.full(30, 65536.0), np.full(30, 32768.0)]  # one halving: normal dynamic scaling
    run = make_run(healthy(n, 3), loss_scale=scale, number_of_skipped_iterations=np.zeros(n))
    assert not MixedPrecisionDetector().analyze(run).findings
    codes = [f.code for f in IntegrityDetector().analyze(run).findings]
    assert "LD021" in codes and "LD007" not in codes  # a zero failure counter is good news
