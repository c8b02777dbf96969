"""NonFiniteDetector (LD001), DivergenceDetector (LD002) and TooShortDetector (LD006)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.detectors.divergence import DivergenceDetector
from logdoctor.detectors.nonfinite import NonFiniteDetector
from logdoctor.detectors.tooshort import TooShortDetector
from logdoctor.model import Run, Severity
from tests.unit.synth import healthy, make_run, warmup_cosine


def test_nan_onset_reports_first_step_runs_and_recovery() -> None:
    loss = healthy(1000, 0)
    loss[400:403] = np.nan
    loss[700] = np.inf
    (f,) = NonFiniteDetector().analyze(make_run(loss)).findings
    ev = f.evidence
    assert (f.code, f.severity, f.first_step, f.last_step, f.line) == (
        "LD001",
        Severity.ERROR,
        401,
        701,
        410,
    )
    assert (ev["n_nonfinite"], ev["n_runs"], ev["longest_run"], ev["n_nan"], ev["n_inf"]) == (
        4,
        2,
        3,
        3,
        1,
    )
    assert ev["recovered"] is True and ev["all_nonfinite"] is False


def test_nan_until_the_end_did_not_recover() -> None:
    loss = healthy(500, 1)
    loss[450:] = np.nan
    (f,) = NonFiniteDetector().analyze(make_run(loss)).findings
    assert f.evidence["recovered"] is False and "never recovered" in f.message


def test_all_nan_run() -> None:
    (f,) = NonFiniteDetector().analyze(make_run(np.full(70, np.nan))).findings
    assert f.evidence["all_nonfinite"] is True and f.evidence["n_nonfinite"] == 70


def test_nan_in_another_column_is_not_a_nonfinite_loss() -> None:
    timing = np.full(300, 12.5)
    timing[::20] = np.nan  # modded-nanogpt "step_avg:nanms"
    assert NonFiniteDetector().analyze(make_run(healthy(300, 2), step_avg=timing)).findings == ()


def test_megatron_like_divergence() -> None:
    # 12.4 at the start, 44 at step 3, slowly back to ~20 (still well above the best level)
    loss = np.concatenate([[12.44, 12.43], 44.2 - np.arange(60) * 0.4])
    (f,) = DivergenceDetector().analyze(make_run(loss)).findings
    ev = f.evidence
    assert f.code == "LD002" and f.first_step == 3 and f.severity == Severity.ERROR
    assert ev["best_level"] == pytest.approx(12.43, abs=0.02) and ev["peak_ratio"] > 3 and ev["until_end"] is True


def test_divergence_after_training_well() -> None:
    loss = healthy(3000, 3)
    loss[2000:] = loss[2000:] * np.linspace(1, 4, 1000)
    (f,) = DivergenceDetector().analyze(make_run(loss)).findings
    assert 2100 < f.first_step < 2400


@pytest.mark.parametrize(
    "loss",
    [
        healthy(3000, 4),
        warmup_cosine(3000, 5),
        np.r_[healthy(500, 6)[:250], healthy(500, 6)[250:] * 1.2],
    ],
)
def test_healthy_and_mild_rises_are_not_divergence(loss: np.ndarray) -> None:
    assert DivergenceDetector().analyze(make_run(loss)).findings == ()


def test_single_spike_is_not_divergence() -> None:
    loss = healthy(2000, 7)
    loss[1000:1002] *= 5
    assert DivergenceDetector().analyze(make_run(loss)).findings == ()


def test_bumps_of_a_near_zero_loss_are_not_divergence() -> None:
    rng = np.random.default_rng(8)
    loss = np.r_[np.geomspace(3, 1e-5, 300), 1e-5 * np.exp(rng.normal(0, 0.3, 2700))]
    loss[1500:1600] = 1e-3  # 100x, but negligible against the run's scale
    assert DivergenceDetector().analyze(make_run(loss)).findings == ()


def test_too_short_is_reported_once_with_skipped_analyses() -> None:
    (f,) = TooShortDetector().analyze(make_run(healthy(15, 9))).findings
    assert f.code == "LD006" and f.evidence["n_steps"] == 15
    assert f.evidence["skipped"] == "changepoints,periodicity,trends"
    assert TooShortDetector().analyze(make_run(healthy(100, 9))).findings == ()


@pytest.mark.parametrize("seed", range(5))
def test_noisy_flat_loss_is_not_divergence(seed: int) -> None:
    loss = np.exp(np.random.default_rng(seed).normal(0, 0.3, 2000))
    assert DivergenceDetector().analyze(make_run(loss)).findings == ()


def test_divergence_that_rises_again_to_the_end_says_so() -> None:
    rng = np.random.default_rng(5)
    up = np.r_[np.full(5, 12.0), np.linspace(45, 12, 25), np.linspace(12, 20, 32)]
    found = DivergenceDetector().analyze(make_run(up * np.exp(rng.normal(0, 0.005, up.size)))).findings
    assert [f.code for f in found] == ["LD002"]
    assert found[0].evidence["rises_again"] is True
    assert "rising again" in found[0].message and found[0].last_step == up.size

    recovered = np.r_[np.full(5, 12.0), np.linspace(45, 12, 25), np.linspace(12, 10, 32)]
    found = DivergenceDetector().analyze(make_run(recovered * np.exp(rng.normal(0, 0.005, up.size)))).findings
    assert [f.code for f in found] == ["LD002"]
    assert "rises_again" not in found[0].evidence and "rising again" not in found[0].message


def _with_missing_losses(loss: np.ndarray, missing: slice) -> Run:
    """A Run whose loss is null (no value read: a parser left it empty) at ``missing``."""
    run = make_run(loss)
    null = pl.int_range(pl.len()).is_between(missing.start, missing.stop - 1)
    return Run(run.table.with_columns(pl.when(null).then(None).otherwise(pl.col("loss")).alias("loss")), run.meta)


def test_a_null_loss_is_no_loss_not_a_nonfinite_one() -> None:
    # issue 28: rows without a loss value were counted as "NaN/inf loss 945 steps" and blamed on
    # non-finite loss (confidence 99%) though the log held no nan
    run = _with_missing_losses(healthy(600, 3), slice(200, 230))
    assert run.table["loss"].null_count() == 30 and run.table["loss"].is_nan().sum() == 0
    assert pipeline.summarize(run).nonfinite_loss_steps == 0
    report = pipeline.analyze(run)
    assert "LD001" not in {f.code for f in report.findings}
    assert "non-finite" not in report.verdict.cause and "NaN" not in report.verdict.summary


def test_a_nan_beside_null_losses_is_counted_alone() -> None:
    loss = healthy(600, 4)
    loss[300] = np.nan
    run = _with_missing_losses(loss, slice(200, 230))
    assert pipeline.summarize(run).nonfinite_loss_steps == 1
    (f,) = NonFiniteDetector().analyze(run).findings
    assert (f.first_step, f.evidence["n_nonfinite"]) == (301, 1)
