"""The epoch-boundary jump statistic: no jump read into a curved decay, real steps still found."""

from __future__ import annotations

import numpy as np

from logdoctor.diagnosis.epochs import Epochs, shape


def epochs_of(n: int, k: int) -> Epochs:
    per = n // k
    idx = np.minimum(np.arange(n) // per, k - 1)
    return Epochs(idx, tuple(range(1, n + 1, per)), per, "test")


def test_fast_decay_then_flat_epoch_has_no_jump() -> None:
    # TinyLlama's shape: epoch 1 decays fast (convex), epoch 2 continues flat: no boundary jump
    rng = np.random.default_rng(3)
    n = 200
    t = np.arange(n)
    loss = 1.05 + 1.0 * np.exp(-t / 25) + rng.normal(0, 0.015, n)
    s = shape(t + 1.0, loss, loss - np.median(loss), epochs_of(n, 2))
    assert s is not None
    assert abs(s.jump_z) < 4, s
    assert not s.staircase and not s.sawtooth


def test_real_staircase_still_found() -> None:
    rng = np.random.default_rng(4)
    n, k = 400, 4
    idx = np.minimum(np.arange(n) // (n // k), k - 1)
    loss = 2.0 - 0.25 * idx + rng.normal(0, 0.03, n)
    s = shape(np.arange(n) + 1.0, loss, loss - loss.mean(), epochs_of(n, k))
    assert s is not None and s.staircase and s.jump < -0.2
