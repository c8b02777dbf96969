"""Eval noise (LD415) on the evals table, and the loss-floor heuristic (LD420)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.detectors.evalnoise import EvalNoiseDetector, metric_columns
from logdoctor.detectors.lossfloor import LossFloorDetector
from logdoctor.model import Run
from tests.unit.synth import healthy, make_run


def _with_evals(values: np.ndarray, name: str = "eval_loss") -> Run:
    steps = np.arange(1, values.size + 1) * 100
    run = make_run(healthy(int(steps[-1]), 0))
    evals = pl.DataFrame({"step": steps.astype(np.int64), "line_no": steps.astype(np.int64), name: values})
    return dataclasses.replace(run, evals=evals)


def test_noisy_eval_metric_is_found() -> None:
    rng = np.random.default_rng(1)
    v = 2.0 - 0.05 * np.arange(20) / 20 + rng.normal(0, 0.05, 20)  # improvement 0.05, noise 0.05
    (f,) = EvalNoiseDetector().analyze(_with_evals(v)).findings
    assert f.code == "LD415" and f.severity.label == "info" and f.evidence["metric"] == "eval_loss"
    assert f.evidence["checkpoints_within_noise"] >= 3


def test_clean_eval_curve_is_silent() -> None:
    rng = np.random.default_rng(2)
    v = 2.0 * np.exp(-np.arange(20) / 6) + 1 + rng.normal(0, 0.005, 20)
    assert EvalNoiseDetector().analyze(_with_evals(v)).findings == ()
    acc = 0.5 + 0.4 * (1 - np.exp(-np.arange(20) / 6)) + rng.normal(0, 0.003, 20)
    assert EvalNoiseDetector().analyze(_with_evals(acc, "eval_accuracy")).findings == ()


def test_bookkeeping_columns_are_not_metrics() -> None:
    ev = pl.DataFrame(
        {
            "step": [1],
            "line_no": [1],
            "eval_loss": [1.0],
            "eval_runtime": [2.0],
            "eval_samples_per_second": [3.0],
            "eval_wer": [0.3],
        }
    )
    assert metric_columns(ev) == ["eval_loss", "eval_wer"]
    # Sockeye's checkpoint line: ``Updates/sec`` is the speed, not a quality metric (was LD415 on it)
    sock = pl.DataFrame({"step": [1], "updates_sec": [3.5], "time_cost": [1.0], "validation_ppl": [9.0]})
    assert metric_columns(sock) == ["validation_ppl"]


def test_fast_fall_to_zero_is_the_loss_floor_heuristic() -> None:
    t = np.arange(2000)
    loss = 2.3 * np.exp(-t / 15) + 1e-4  # near zero after ~100 of 2000 steps
    (f,) = LossFloorDetector().analyze(make_run(loss)).findings
    assert f.code == "LD420" and f.message.startswith("Heuristic:") and f.evidence["heuristic"] is True
    assert f.evidence["row_fraction"] < 0.1


def test_slow_memorisation_and_healthy_runs_are_not_the_loss_floor() -> None:
    t = np.arange(2000)
    assert LossFloorDetector().analyze(make_run(2.3 * np.exp(-t / 400) + 1e-4)).findings == ()
    assert LossFloorDetector().analyze(make_run(healthy(2000, 3))).findings == ()


@pytest.mark.reallogs
def test_no_loss_floor_or_eval_noise_warning_on_real_logs(reallogs_dir: Path) -> None:
    from tests.unit.test_silence import healthy_real_logs

    for name in healthy_real_logs(reallogs_dir):
        run = pipeline.load(str(reallogs_dir / name))
        found = [*LossFloorDetector().analyze(run).findings, *EvalNoiseDetector().analyze(run).findings]
        assert [f.code for f in found if f.severity.label != "info"] == [], name
