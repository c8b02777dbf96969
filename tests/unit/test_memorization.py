"""Memorisation (LD411): train loss falls many-fold while an eval score stays flat (or worsens)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.detectors.memorization import MemorizationDetector, direction
from logdoctor.detectors.overfitting import OverfittingDetector
from logdoctor.model import Run
from tests.unit.blindcache import blind_log
from tests.unit.synth import make_run

N = 2000


def _run(train: np.ndarray, evals: dict[str, np.ndarray], every: int = 100) -> Run:
    run = make_run(train)
    steps = np.arange(every, N + 1, every)
    frame = pl.DataFrame({"step": steps, "line_no": steps + 10} | {k: v for k, v in evals.items()})
    return Run(run.table, run.meta, evals=frame.with_columns(pl.col("step").cast(pl.Int64)))


def _train(seed: int, start: float, end: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(1, N + 1)
    return np.exp(np.log(start) + (np.log(end) - np.log(start)) * (1 - np.exp(-t / 500)) / (1 - np.exp(-4))) * np.exp(
        rng.normal(0, 0.1, N)
    )


def _score(seed: int, rise_until: int, lo: float, hi: float, noise: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    s = np.arange(100, N + 1, 100)
    return lo + (hi - lo) * np.minimum(s / rise_until, 1.0) + rng.normal(0, noise, s.size)


@pytest.mark.parametrize(
    ("name", "sign"),
    [("bleu_4", 1), ("dev_bleu_4", 1), ("val_acc", 1), ("eval_mean_token_accuracy", 1), ("exact_match", 1),
     ("validation_rouge1", 1), ("val_sparse_categorical_accuracy", 1), ("hellaswag", 1), ("eval_f1", 1),
     ("eval_wer", -1), ("validation_ter", -1), ("val_perplexity", -1), ("cer", -1),
     ("eval_loss", 0), ("eval_runtime", 0), ("eval_samples_per_second", 0), ("test_acc", 0), ("best_bleu", 0),
     ("val_length_ratio_mse", 0), ("iter", 0), ("eval_num_tokens", 0)],
)  # fmt: skip
def test_direction_is_known_per_metric_name(name: str, sign: int) -> None:
    assert direction(name) == sign


@pytest.mark.parametrize("seed", range(5))
def test_flat_bleu_while_train_loss_collapses_is_memorisation(seed: int) -> None:
    run = _run(_train(seed, 2.0, 0.005), {"bleu": _score(seed, 400, 20.0, 30.0, 0.3)})
    (found,) = MemorizationDetector().analyze(run).findings
    assert found.code == "LD411" and found.severity.label == "warning"
    assert found.evidence["metric"] == "bleu" and found.evidence["train_fold"] > 10  # about 19 by construction
    assert 400 <= found.evidence["plateau_step"] <= 700  # the score stops rising at 400
    assert "fold since step" in found.message


def test_worsening_wer_is_the_mirror() -> None:
    wer = 0.30 + 0.0001 * np.arange(100, N + 1, 100) + np.random.default_rng(1).normal(0, 0.005, 20)
    run = _run(_train(1, 1.5, 0.01), {"eval_wer": wer})
    (found,) = MemorizationDetector().analyze(run).findings
    assert found.evidence["higher_is_better"] is False and found.evidence["got_worse"] is True
    assert "got worse" in found.message


@pytest.mark.parametrize("seed", range(5))
def test_score_still_improving_is_not_memorisation(seed: int) -> None:
    # a long fine-tune: the train loss falls 50-fold and BLEU keeps rising to the end
    run = _run(_train(seed, 2.0, 0.04), {"bleu": _score(seed, N, 20.0, 30.0, 0.5)})
    assert not MemorizationDetector().analyze(run).findings


@pytest.mark.parametrize("seed", range(5))
def test_converged_run_with_flat_score_and_modest_train_fall_is_silent(seed: int) -> None:
    run = _run(_train(seed, 2.0, 0.9), {"val_acc": _score(seed, 300, 0.5, 0.8, 0.01)})
    assert not MemorizationDetector().analyze(run).findings


def _flat_loss(seed: int, best_at: int, n: int = 20) -> np.ndarray:
    """A val loss flat at 1.0 within 2% noise whose lowest eval is at index ``best_at``."""
    v = 1.0 + np.abs(np.random.default_rng(seed).normal(0, 0.02, n)) + 0.01
    v[best_at] = 0.98
    return v


def test_a_val_loss_that_never_beats_its_early_best_while_the_train_loss_falls_is_memorisation() -> None:
    run = _run(_train(0, 2.0, 0.005), {"eval_loss": _flat_loss(0, 5)})
    (found,) = MemorizationDetector().analyze(run).findings
    assert found.code == "LD411" and found.evidence["metric"] == "eval_loss"
    assert found.evidence["higher_is_better"] is False
    assert "at step 600 (best eval_loss)" in found.hint  # the eval at index 5 is step 600


@pytest.mark.parametrize(("best_at", "found"), [(16, True), (17, False), (19, False)])
def test_a_val_loss_still_setting_bests_near_its_end_is_still_generalising(best_at: int, found: bool) -> None:
    """3 evals after the best (min_evals - 1) are the least that say it stopped improving."""
    run = _run(_train(0, 2.0, 0.005), {"eval_loss": _flat_loss(1, best_at)})
    assert bool(MemorizationDetector().analyze(run).findings) is found


@pytest.mark.parametrize(("end", "found"), [(0.4, False), (0.3, True)])
def test_a_val_loss_past_its_best_needs_the_train_loss_to_fall_min_fold(end: float, found: bool) -> None:
    """Over the val loss's flat stretch (from its start) the training loss falls 4.2x or 5.5x."""
    run = _run(_train(2, 2.0, end), {"eval_loss": _flat_loss(2, 0)})
    assert bool(MemorizationDetector().analyze(run).findings) is found


def test_a_val_loss_that_rises_beyond_its_noise_is_left_to_ld410() -> None:
    val = np.r_[np.linspace(1.0, 0.5, 8), np.linspace(0.55, 1.5, 12)]
    run = _run(_train(0, 2.0, 0.005), {"eval_loss": val})
    assert not MemorizationDetector().analyze(run).findings
    assert [f.code for f in OverfittingDetector().analyze(run).findings] == ["LD410"]


def test_a_flat_val_loss_inside_the_first_epoch_is_no_memorisation() -> None:
    run = _run(_train(0, 2.0, 0.005), {"eval_loss": _flat_loss(0, 5)})
    one_epoch = Run(run.table, dataclasses.replace(run.meta, steps_per_epoch=N), evals=run.evals)
    assert not MemorizationDetector().analyze(one_epoch).findings


def _csvlogger(path: Path, seed: int, drift: float) -> Path:
    """A Keras CSVLogger table, one row per epoch: the train loss falls 1.8 -> ~0.08 over 30 epochs; the
    val loss follows it to ~0.36 by epoch 12, then swings by about a fifth from epoch to epoch
    (alternating), drifting by ``drift`` per epoch."""
    rng = np.random.default_rng(seed)
    e = np.arange(30)
    loss = 1.8 * np.exp(-e / 9.5) + rng.normal(0, 0.005, 30)
    val = np.maximum(1.3 * np.exp(-e / 4.0), 0.36) + drift * np.maximum(e - 12, 0)
    val = val + np.where(e % 2, 0.05, -0.03) * (e > 8) + rng.normal(0, 0.01, 30)
    rows = [f"{i},{0.5 + 0.015 * i:.4f},{loss[i]:.5f},{val[i]:.5f}" for i in e]
    path.write_text("epoch,accuracy,loss,val_loss\n" + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("seed", range(3))
def test_an_epoch_table_whose_zigzag_val_loss_never_beats_its_best_is_found(tmp_path: Path, seed: int) -> None:
    run = pipeline.load(str(_csvlogger(tmp_path / "training_log.csv", seed, 0.002)))
    assert not OverfittingDetector().analyze(run).findings  # the swings hide the drift from LD410
    (found,) = MemorizationDetector().analyze(run).findings
    assert found.evidence["metric"] == "val_loss" and found.evidence["train_fold"] >= 5


def test_the_real_keras_overfit_table_is_found() -> None:
    """The dev blind Keras CSVLogger log whose truth is overfitting (caught by EarlyStopping)."""
    path = blind_log("keras_csvlogger_tomato_early_stop_overfit.csv")
    run = pipeline.load(str(path))
    (found,) = MemorizationDetector().analyze(run).findings
    best = int(np.argmin(run.evals["val_loss"].to_numpy()))
    assert found.evidence["metric"] == "val_loss" and f"at step {best}" in found.hint


@pytest.mark.parametrize(
    "name",
    [
        "keras_fit_stdout_catdog_40ep_healthy.txt",
        "speechbrain_moabb_eegnet_bnci2014001_sub1_train_log.txt",
        "ultralytics_yolo11fork_train14_early_stop_results.csv",
        "yolov5_v50_apex_exp11_healthy_results.txt",
        "lightning_pinn_pendulum_v28_10000ep_metrics.csv",
    ],
)
def test_healthy_real_runs_with_a_val_loss_stay_silent(name: str) -> None:
    """Healthy dev blind runs with a validation loss (epoch tables and per-epoch stdout among them)."""
    run = pipeline.load(str(blind_log(name)))
    assert not MemorizationDetector().analyze(run).findings


@pytest.mark.reallogs
def test_a_healthy_real_keras_epoch_table_stays_silent(reallogs_dir: Path) -> None:
    run = pipeline.load(str(reallogs_dir / "keras_csvlogger_brats_unet.log"))
    assert not MemorizationDetector().analyze(run).findings


def test_negative_training_loss_is_no_fold() -> None:
    run = _run(-_train(0, 2.0, 0.005), {"bleu": _score(0, 400, 20.0, 30.0, 0.3)})
    assert not MemorizationDetector().analyze(run).findings


@pytest.mark.parametrize(("val_end", "found"), [(0.05, False), (1.9, True), (2.4, True)])
def test_a_held_out_loss_that_falls_with_the_training_loss_is_no_memorisation(val_end: float, found: bool) -> None:
    """The Keras public log (issue 29): a custom F1 stays flat while the train loss falls 20-fold, but
    val_loss falls with it (here 16-fold over the plateau): the fall generalises (no LD411). A
    val_loss that stays (1.9) or rises (2.4) keeps the finding."""
    s = np.arange(100, N + 1, 100)
    val = 2.0 * (val_end / 2.0) ** (s / N) + np.random.default_rng(2).normal(0, 0.01, s.size)
    run = _run(_train(3, 2.0, 0.005), {"val_f1": _score(3, 400, 0.9, 0.95, 0.005), "val_loss": val})
    assert bool(MemorizationDetector().analyze(run).findings) == found


def test_a_per_epoch_run_whose_losses_fall_together_in_two_epochs_is_no_memorisation() -> None:
    """The public Keras U-Net log (issue 29): one row per epoch, train loss 1.39 -> 0.48 -> 0.05 and
    val_loss 0.79 -> 0.20 -> 0.06 in the first epochs, then flat; val_precision jumps at epoch 1 and
    sits at the background share. Both levels at the plateau's start are read over the same rows
    (train 17-fold, val 8.6-fold): no LD411. The same run with val_loss flat from epoch 1 is one."""
    n = 35
    rng = np.random.default_rng(5)
    train = np.r_[1.39, 0.48, 0.1, np.full(n - 3, 0.055)] + rng.normal(0, 0.002, n)
    prec = np.r_[0.969, 0.98655 - 1e-6 * np.arange(n - 1)] + rng.normal(0, 1e-6, n)  # sits, drifting down
    for val, found in ((np.r_[0.785, 0.195, 0.07, np.full(n - 3, 0.058)], False), (np.full(n, 0.2), True)):
        run = make_run(train)
        steps = run.table["step"].to_numpy()
        frame = pl.DataFrame(
            {"step": steps, "line_no": steps + 100, "val_precision": prec, "val_loss": val + rng.normal(0, 0.001, n)}
        )
        run = Run(run.table, run.meta, evals=frame.with_columns(pl.col("step").cast(pl.Int64)))
        assert bool(MemorizationDetector().analyze(run).findings) == found


@pytest.mark.parametrize(("train_acc_end", "found"), [(0.0, False), (0.95, True)])
def test_a_training_accuracy_that_does_not_rise_is_no_memorisation(train_acc_end: float, found: bool) -> None:
    """The loss falls 400-fold while the eval accuracy stays flat: memorisation only when the training
    accuracy rose with it (a model at accuracy 0 in training too memorised nothing: PaddleOCR's CTC)."""
    run = _run(_train(3, 2.0, 0.005), {"val_acc": _score(3, 400, 0.0, 0.0, 0.0) + 0.0})
    acc = np.minimum(np.arange(1, N + 1) / 500, 1.0) * train_acc_end
    run = Run(run.table.with_columns(pl.Series("acc", acc)), run.meta, evals=run.evals)
    codes = [f.code for f in MemorizationDetector().analyze(run).findings]
    assert ("LD411" in codes) is found, codes
