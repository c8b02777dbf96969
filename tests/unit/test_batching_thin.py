"""Thin or odd data never crashes the diagnosis: it answers inconclusive or names what it sees."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from logdoctor.detectors.nonfinite import NonFiniteDetector
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.model import Run, RunMeta, validate_run


def run_of(loss: list[float], **cols: list[float]) -> Run:
    n = len(loss)
    table = pl.DataFrame({"step": np.arange(1, n + 1), "line_no": np.arange(1, n + 1), "loss": loss} | cols)
    return Run(validate_run(table), RunMeta("-", "test"))


@pytest.mark.parametrize("n", [1, 2, 5, 40])
def test_short_runs_are_inconclusive(n: int) -> None:
    loss = list(np.linspace(3, 2, n))
    v = BatchingDiagnosis().diagnose(run_of(loss, len_mean=list(np.linspace(100, 900, n))), []).verdict
    assert v.batching == "inconclusive"


def test_all_nan_loss_is_not_batching() -> None:
    run = run_of([float("nan")] * 50)
    v = BatchingDiagnosis().diagnose(run, NonFiniteDetector().analyze(run).findings).verdict
    assert v.batching == "not_batching" and v.evidence["cause_from_finding"] == "LD001"


def test_constant_loss_and_lengths() -> None:
    v = (
        BatchingDiagnosis()
        .diagnose(run_of([2.0] * 200, len_mean=[512.0] * 200, epoch=[0.0] * 100 + [1.0] * 100), [])
        .verdict
    )
    assert v.batching == "inconclusive"
    assert v.cause == "batch lengths do not vary"


def test_missing_lengths_in_places_are_tolerated_without_blaming_batching() -> None:
    rng = np.random.default_rng(0)
    lens = list(rng.uniform(50, 900, 300))
    lens[::7] = [float("nan")] * len(lens[::7])
    v = BatchingDiagnosis().diagnose(run_of(list(rng.normal(2, 0.1, 300)), len_mean=lens), []).verdict
    assert v.batching not in ("sorted", "static")  # random lengths, some missing: no fault to call


def test_a_lone_length_ramp_that_the_loss_ignores_is_not_sorted() -> None:
    n = 40
    loss = [3 - i * 0.01 for i in range(1, n + 1)]
    v = BatchingDiagnosis().diagnose(run_of(loss, len_mean=[100.0 + i for i in range(1, n + 1)]), [])
    assert v.verdict.batching == "inconclusive"
