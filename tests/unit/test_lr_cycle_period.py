"""A loss period equal to a cyclic lr's period is the schedule's (explained by LD506), not a data-order warning."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from logdoctor import pipeline
from logdoctor.detectors.robust import Series
from logdoctor.diagnosis.confounders import lr_cycle
from logdoctor.model import Report, Severity


def _triangle(n: int, period: int, lo: float = 1e-5, hi: float = 5e-3) -> np.ndarray:
    pos = (np.arange(n) % period) / period
    return lo + (hi - lo) * (1 - np.abs(2 * pos - 1))


def _series(lr: np.ndarray) -> Series:
    steps = np.arange(1, lr.size + 1)
    return Series(steps, lr, steps, True)


def test_lr_cycle_of_a_triangular_cycle() -> None:
    assert lr_cycle(_series(_triangle(200, 9))) == pytest.approx(9.0, abs=0.5)


def test_no_lr_cycle_for_warmup_then_decay_or_irregular_restarts() -> None:
    warm = np.r_[np.linspace(0, 1e-3, 20), np.linspace(1e-3, 0, 180)]
    assert lr_cycle(_series(warm)) is None
    restarts = np.concatenate([np.linspace(1e-3, 1e-6, k) for k in (10, 20, 40, 80, 50)])  # SGDR, cycles doubling
    assert lr_cycle(_series(restarts)) is None


def _analyze(tmp_path: Path, lr: np.ndarray, loss: np.ndarray) -> Report:
    p = tmp_path / "train.log"
    rows = enumerate(zip(loss, lr, strict=True))
    p.write_text("".join(f"step {i + 1} | loss {x:.6f} | lr {y:.6g}\n" for i, (x, y) in rows))
    return pipeline.analyze(pipeline.load(str(p)))


def test_a_loss_following_a_cyclic_lr_is_explained(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 300
    lr = _triangle(n, 9)
    loss = 1.4 * np.exp(-np.arange(n) / 80) + 0.5 + 40 * lr + rng.normal(0, 0.02, n)
    r = _analyze(tmp_path, lr, loss)
    ld201 = [f for f in r.findings if f.code == "LD201"]
    assert ld201 and all(f.severity == Severity.INFO for f in ld201)
    assert ld201[0].evidence.get("explained_by") == "cyclic-lr"


def test_a_loss_period_unlike_the_lr_cycle_is_not_explained_by_it(tmp_path: Path) -> None:
    # must not: the lr cycles every 9 steps, but the loss repeats every 25 (data order, say)
    rng = np.random.default_rng(1)
    n = 300
    lr = _triangle(n, 9, lo=1e-3, hi=1.1e-3)
    loss = 1.4 * np.exp(-np.arange(n) / 80) + 0.5 + 0.2 * np.sin(2 * np.pi * np.arange(n) / 25) + rng.normal(0, 0.02, n)
    r = _analyze(tmp_path, lr, loss)
    assert not any(f.evidence.get("explained_by") == "cyclic-lr" for f in r.findings)
