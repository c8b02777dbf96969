"""LD410 overfitting on seeded eval curves: found when eval rises while train falls, silent otherwise."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import polars as pl

from logdoctor import pipeline
from logdoctor.detectors.evalseries import eval_loss_column, main_eval_loss
from logdoctor.detectors.overfitting import OverfittingDetector
from logdoctor.model import Run
from logdoctor.structure.evals import place_evals
from tests.unit.synth import healthy, make_run


def with_evals(run: Run, steps: np.ndarray, values: np.ndarray, name: str = "eval_loss") -> Run:
    ev = pl.DataFrame({"step": steps.astype(np.int64), "line_no": steps.astype(np.int64) + 10, name: values})
    return dataclasses.replace(run, evals=ev)


def eval_curve(seed: int, n_evals: int, turn: float | None, noise: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """Eval loss falling to a minimum at ``turn`` (fraction of the run), then rising linearly."""
    rng = np.random.default_rng(seed)
    steps = np.linspace(100, 2000, n_evals).astype(int)
    x = steps / 2000
    base = 2.0 + 1.5 * np.exp(-x / 0.1)
    if turn is not None:
        base = base + np.where(x > turn, 0.6 * (x - turn), 0.0)
    return steps, base * np.exp(rng.normal(0, noise, n_evals))


def test_rising_eval_with_falling_train_is_overfitting() -> None:
    run = make_run(healthy(2000, 1, tau=400, floor=0.5))
    steps, vals = eval_curve(2, 20, turn=0.4)
    found = OverfittingDetector().analyze(with_evals(run, steps, vals)).findings
    assert [f.code for f in found] == ["LD410"]
    f = found[0]
    best = int(steps[int(np.argmin(vals))])
    assert f.evidence["best_step"] == best
    assert f"step {best:,}" in f.hint  # recommends the best checkpoint
    assert f.severity.label == "warning"


def test_eval_still_falling_is_silent() -> None:
    run = make_run(healthy(2000, 3, tau=400, floor=0.5))
    for seed in range(10):
        steps, vals = eval_curve(seed, 20, turn=None, noise=0.02)
        assert not OverfittingDetector().analyze(with_evals(run, steps, vals)).findings


def test_eval_rising_with_train_rising_is_an_eval_rise_not_overfitting() -> None:
    """The training loss goes up too: no overfitting (LD410), but held-out got worse: LD412, which
    says the training loss rose with it."""
    train = healthy(2000, 4, tau=400, floor=0.5)
    train[1000:] += np.linspace(0, 2.0, 1000)
    steps, vals = eval_curve(5, 20, turn=0.4)
    found = OverfittingDetector().analyze(with_evals(make_run(train), steps, vals)).findings
    assert [f.code for f in found] == ["LD412"]
    assert "training loss rose too" in found[0].message and "lower the lr" in found[0].hint


def test_a_rise_inside_the_first_epoch_is_an_eval_rise_not_overfitting() -> None:
    """Overfitting needs training data seen more than once: the same falling train loss and rising
    eval loss are LD412 while every eval is inside epoch 1, LD410 once the run is past it."""
    train = healthy(2000, 1, tau=400, floor=0.5)
    steps, vals = eval_curve(2, 20, turn=0.4)
    inside = make_run(train, steps_per_epoch=2000)
    found = OverfittingDetector().analyze(with_evals(inside, steps, vals)).findings
    assert [f.code for f in found] == ["LD412"]
    assert "inside the first epoch" in found[0].message and "seen twice" in found[0].hint
    past = make_run(train, steps_per_epoch=500)
    assert [f.code for f in OverfittingDetector().analyze(with_evals(past, steps, vals)).findings] == ["LD410"]


def test_a_jump_after_a_best_first_eval_is_a_rise() -> None:
    """A best at the first eval, then a jump up that stays (a warm-up that pushed the lr too high): the
    best level is the first eval plus its noise, not the mean of it and the jump."""
    train = 0.15 * np.exp(np.random.default_rng(4).normal(0, 0.03, 2000))
    train[300:] *= 1.25  # the training loss rose with it
    steps = np.array([250, 500, 750, 1000, 1250, 1500])
    vals = np.array([0.219, 0.416, 0.423, 0.410, 0.438, 0.402])
    found = OverfittingDetector().analyze(with_evals(make_run(train), steps, vals)).findings
    assert [f.code for f in found] == ["LD412"] and found[0].evidence["best_step"] == 250


def test_a_lone_low_eval_inside_a_flat_stretch_is_no_best_level() -> None:
    """Must not: one low eval between higher neighbours (a lucky eval, or one of another launch) is no
    level to rise from; the flat evals after it are no rise."""
    run = make_run(healthy(2000, 6, tau=400, floor=0.5))
    rng = np.random.default_rng(5)
    steps = np.linspace(100, 2000, 30).astype(int)
    for _ in range(20):
        vals = 2.0 * np.exp(rng.normal(0, 0.003, steps.size))
        vals[20] = 1.9  # a lone low eval
        assert not OverfittingDetector().analyze(with_evals(run, steps, vals)).findings


def test_too_few_evals_are_not_judged() -> None:
    """Must not: three evals (one rising pair) are too few to tell a rise from noise."""
    run = make_run(healthy(2000, 1, tau=400, floor=0.5))
    steps = np.array([500, 1000, 2000])
    det = OverfittingDetector().analyze(with_evals(run, steps, np.array([2.0, 1.5, 3.0])))
    assert not det.findings and det.skipped


def test_noisy_flat_eval_is_silent() -> None:
    run = make_run(healthy(2000, 6, tau=400, floor=0.5))
    rng = np.random.default_rng(7)
    steps = np.linspace(100, 2000, 30).astype(int)
    for _ in range(20):
        vals = 2.0 * np.exp(rng.normal(0, 0.03, steps.size))
        assert not OverfittingDetector().analyze(with_evals(run, steps, vals)).findings


def test_eval_column_choice_and_stepless_rows_placed() -> None:
    run = make_run(healthy(100, 8))
    ev = pl.DataFrame({"line_no": [30, 60], "test_loss": [1.0, 2.0], "valid_ppl": [9.0, 8.0], "valid_loss": [2.2, 2.1]})
    placed = place_evals(ev, run.table)
    assert placed["step"].to_list() == [21, 51]  # the training step logged just before each eval line
    run = dataclasses.replace(run, evals=placed)
    assert eval_loss_column(run) == "valid_loss"
    series = main_eval_loss(run)
    assert series is not None and series.values.tolist() == [2.2, 2.1]


def test_eval_rising_with_train_flat_is_an_eval_loss_rise() -> None:
    """A held-out loss that turns and rises while the training loss stays flat is no overfitting
    (LD410 needs a falling training loss) but an eval-loss rise (LD412)."""
    rng = np.random.default_rng(3)
    train = 2.0 + rng.normal(0, 0.01, 2000)  # flat: the run stopped learning
    steps, vals = eval_curve(5, 20, turn=0.4)
    found = OverfittingDetector().analyze(with_evals(make_run(train), steps, vals)).findings
    assert [f.code for f in found] == ["LD412"]
    ev = found[0].evidence
    assert ev["series"] == "eval" and ev["rise_rel"] > 0.01 and ev["evals_after_best"] >= 2
    assert abs(float(ev["train_loss_at_best"]) - float(ev["train_loss_at_end"])) < 0.04


def test_flat_train_with_flat_noisy_eval_is_silent() -> None:
    """Must not: a flat training loss beside a flat noisy eval loss is no rise (20 seeds)."""
    rng = np.random.default_rng(11)
    steps = np.linspace(100, 2000, 30).astype(int)
    for _ in range(20):
        run = make_run(2.0 + rng.normal(0, 0.01, 2000))
        vals = 2.0 * np.exp(rng.normal(0, 0.03, steps.size))
        assert not OverfittingDetector().analyze(with_evals(run, steps, vals)).findings


def _sockeye_log(val_ppl: list[float], restore_after: int | None) -> str:
    """A Sockeye 3 train.log (sockeye/training.py's own lines): 20 batch lines per checkpoint, then the
    checkpoint's train and validation perplexity; the reload line after checkpoint ``restore_after``."""
    lines = ["[INFO:sockeye.utils] Sockeye: 3.1.14"]
    b = 0
    for c, vp in enumerate(val_ppl, start=1):
        for _ in range(20):
            b += 50
            ppl = 30 * np.exp(-b / 20000) + 10
            lines.append(
                f"[INFO:sockeye.training] E={c} B={b}\ts/sec=600.00 tok/sec=9800.00 u/sec=0.93\tppl={ppl:.6f} "
            )
        lines.append(f"[INFO:sockeye.training] Checkpoint [{c}]\tUpdates={b} Epoch={c} Samples={b * 100} Time-cost=1.0")
        lines.append(f"[INFO:sockeye.training] Checkpoint [{c}]\tTrain-ppl={ppl:.6f}")
        lines.append(f"[INFO:sockeye.training] Checkpoint [{c}]\tValidation-ppl={vp:.6f}\tValidation-bleu=0.3")
        if restore_after == c:
            lines.append(
                "[INFO:sockeye.training] Loading model parameters and optimizer states from best checkpoint: 1"
            )
    return "\n".join(lines) + "\n"


#: A validation perplexity that rises for five checkpoints, is reset by the reload of the best
#: checkpoint, and rises again (the dev blind Sockeye run's values).
RELOADED = [36.920319, 38.419562, 39.044164, 40.660623, 41.708628, 42.709899, 37.817907, 38.238029, 38.778016]
RELOADED += [39.864071, 40.782851]


def test_a_rise_ended_by_a_reload_of_the_best_checkpoint_is_overfitting(tmp_path: Path) -> None:
    """The evals after a mid-run reload continue from the best model: the rise before it is judged on
    its own. Without the reload line the same series, judged to its end, is within the rule's noise."""
    path = tmp_path / "train.log"
    path.write_text(_sockeye_log(RELOADED, restore_after=6))
    found = OverfittingDetector().analyze(pipeline.load(str(path))).findings
    assert [f.code for f in found] == ["LD410"]
    assert found[0].last_step == 6000 and "reloaded its best checkpoint" in found[0].message
    path.write_text(_sockeye_log(RELOADED, restore_after=None))
    assert not OverfittingDetector().analyze(pipeline.load(str(path))).findings


def test_a_reload_after_a_plateau_is_silent(tmp_path: Path) -> None:
    """Must not: a validation perplexity that fell and then sat within its noise before the reload (a
    healthy Sockeye run's lr cut) is no rise, before the reload or after it."""
    rng = np.random.default_rng(3)
    path = tmp_path / "train.log"
    for _ in range(10):
        val = [60.0, 48.0, 42.0, 39.0, 37.5, *(37.0 + rng.normal(0, 0.3, 8)).tolist()]
        path.write_text(_sockeye_log(val, restore_after=10))
        assert not OverfittingDetector().analyze(pipeline.load(str(path))).findings
