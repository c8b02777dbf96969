"""The lr-schedule detector (LD601-LD605) and lr-cause linking, on synthetic lr curves and real logs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.detectors import lrcause, lrevents
from logdoctor.detectors.divergence import DivergenceDetector
from logdoctor.detectors.lrschedule import LrScheduleDetector
from logdoctor.model import Run
from tests.reports import report_of
from tests.unit.synth import healthy, make_run


def _warmup_cosine_lr(n: int, peak: float = 1e-3, warmup: int = 50) -> np.ndarray:
    t = np.arange(n, dtype=float)
    cos = peak * (0.1 + 0.45 * (1 + np.cos(np.pi * (t - warmup) / (n - warmup))))
    return np.where(t < warmup, peak * (t + 1) / max(warmup, 1), cos)


def _codes(lr: np.ndarray, loss: np.ndarray | None = None) -> list[str]:
    run = make_run(healthy(lr.size, 0) if loss is None else loss, lr=lr)
    return [f.code for f in LrScheduleDetector().analyze(run).findings]


def test_warmup_cosine_is_silent() -> None:
    assert _codes(_warmup_cosine_lr(1000)) == []


def test_coarsely_logged_linear_warmup_is_a_ramp_not_a_jump() -> None:
    lr = _warmup_cosine_lr(1000, warmup=400)[::20]
    assert lrevents.discontinuities(lrevents.lr_series(make_run(healthy(lr.size, 1), lr=lr))) == []


def test_no_warmup_is_reported_as_info() -> None:
    lr = _warmup_cosine_lr(1000, warmup=0)
    run = make_run(healthy(1000, 0), lr=lr)
    found = LrScheduleDetector().analyze(run).findings
    assert [f.code for f in found] == ["LD601"]
    assert found[0].severity.label == "info"


def test_a_log_that_starts_late_cannot_tell_about_warmup() -> None:
    lr = _warmup_cosine_lr(1000)[100:]
    run = make_run(healthy(900, 0), steps=np.arange(101, 1001), lr=lr)
    assert "LD601" not in [f.code for f in LrScheduleDetector().analyze(run).findings]


def test_lr_jump_mid_run_is_found_with_the_loss_response() -> None:
    lr = _warmup_cosine_lr(1000)
    lr[600:] *= 80.0
    loss = healthy(1000, 2)
    loss[602:] *= 6.0
    run = make_run(loss, lr=lr)
    found = {f.code: f for f in LrScheduleDetector().analyze(run).findings}
    assert "LD603" in found
    ev = found["LD603"].evidence
    assert ev["step"] == 601 and ev["loss_diverged_step"] == 603 and ev["loss_lag_steps"] == 2
    assert "the loss rose above 1.5x its earlier level 2 steps later" in found["LD603"].message


def test_step_decay_drops_and_warm_restarts_are_not_jumps() -> None:
    lr = np.repeat([1e-2, 1e-3, 1e-4], 300)
    assert "LD603" not in _codes(lr)
    restart = np.concatenate([_warmup_cosine_lr(500, warmup=0)] * 3)
    codes = _codes(restart)
    assert "LD603" not in codes and "LD602" not in codes and "LD604" in codes


def test_single_smooth_rise_after_the_peak_is_a_warning() -> None:
    lr = _warmup_cosine_lr(1000)
    lr[700:] = np.linspace(lr[699], lr[699] * 3, 300)
    assert "LD602" in _codes(lr)


def test_loss_stuck_until_the_lr_drops_is_lr_too_high() -> None:
    rng = np.random.default_rng(3)
    loss = np.concatenate([18.5 + rng.normal(0, 0.5, 100), 8.5 * np.exp(-np.arange(100) / 400)])
    lr = np.repeat([20.0, 5.0], 100)
    found = {f.code: f for f in LrScheduleDetector().analyze(make_run(loss, lr=lr)).findings}
    assert "LD605" in found
    assert "when the lr dropped from 20 to 5 at step 101: the earlier lr was too high" in found["LD605"].message


def test_step_decay_after_progress_is_not_lr_too_high() -> None:
    loss = healthy(600, 4, start=10, floor=2, tau=100)
    loss[300:] *= 0.7
    assert "LD605" not in _codes(np.repeat([0.1, 0.01], 300), loss)


def test_plateau_between_later_drops_is_annealing_not_lr_too_high() -> None:
    rng = np.random.default_rng(5)
    first = 0.3 + 2.0 * np.exp(-np.arange(200) / 30)  # learns at the first lr
    loss = np.concatenate([first, np.full(200, 0.25), np.full(200, 0.12)]) * np.exp(rng.normal(0, 0.02, 600))
    lr = np.repeat([0.1, 0.01, 0.001], 200)
    assert "LD605" not in _codes(lr, loss)


def test_divergence_at_a_jump_names_it_as_its_cause() -> None:
    lr = _warmup_cosine_lr(1000)
    lr[600:] *= 80.0
    loss = healthy(1000, 2)
    loss[602:] *= 6.0
    run = make_run(loss, lr=lr)
    div = DivergenceDetector().analyze(run).findings
    linked = lrcause.attach(run, div)
    assert linked[0].message.startswith("The lr jumped from")
    assert linked[0].evidence["lr_cause_step"] == 601
    assert lrcause.attach(make_run(loss, lr=_warmup_cosine_lr(1000)), div) == list(div)


@pytest.mark.reallogs
def test_wordlm_loss_stuck_at_lr_20_is_lr_too_high(reallogs_dir: Path) -> None:
    report = report_of(str(reallogs_dir / "pytorch_wordlm_rnntanh_diverged.md"))
    f = next(f for f in report.findings if f.code == "LD605")
    assert f.severity.label == "warning"
    assert "when the lr dropped from 20 to 5" in f.message and f.evidence["fall"] > 0.5
    level = [f for f in report.findings if f.code == "LD301" and f.evidence.get("lr_cause_after") == 5.0]
    assert level, "the level change at the lr drop names the drop"


@pytest.mark.reallogs
def test_no_lr_warning_on_healthy_real_runs(reallogs_dir: Path) -> None:
    from tests.unit.test_silence import healthy_real_logs

    for name in healthy_real_logs(reallogs_dir):
        run = pipeline.load(str(reallogs_dir / name))
        warn = [f.code for f in LrScheduleDetector().analyze(run).findings if f.severity.label != "info"]
        assert warn == [], name


def test_a_cosine_run_a_few_steps_past_its_total_is_not_a_rise() -> None:
    """A real run's cosine planned for 400 steps ran 412 (token-budget epochs vary): the lr goes
    0 -> 5e-8 against a 3e-3 peak after step 400; no update changes, so no LD602."""
    t = np.arange(412)
    lr = 3e-3 * np.minimum(1.0, (t + 1) / 20) * 0.5 * (1 + np.cos(np.pi * t / 400))
    assert "LD602" not in _codes(lr)
    lr[300:] = np.linspace(lr[300], 2e-3, 112)  # a material smooth rise after the peak still is one
    assert "LD602" in _codes(lr)


def test_a_missing_loss_after_an_lr_jump_is_no_nan() -> None:
    # issue 28: a row without a loss value (null) is no NaN/inf loss in the lr-cause clause
    lr = _warmup_cosine_lr(1000)
    lr[600:] *= 80.0
    run = make_run(healthy(1000, 2), lr=lr)
    null = pl.int_range(pl.len()).is_between(601, 603)
    run = Run(run.table.with_columns(pl.when(null).then(None).otherwise(pl.col("loss")).alias("loss")), run.meta)
    found = {f.code: f for f in LrScheduleDetector().analyze(run).findings}
    assert "LD603" in found
    assert found["LD603"].evidence["loss_nonfinite"] is False
    assert "NaN" not in found["LD603"].message
