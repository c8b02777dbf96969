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


def test_opening_transient_over_short_epochs_is_no_sawtooth() -> None:
    # a fresh run's loss, sampled every 200 steps over three epochs of 8-9 rows: a plateau, then a
    # sigmoid-like fall; lines through such short epochs end below the rows and read a jump there
    loss = np.array(
        [
            2115,
            1114,
            784,
            716,
            718,
            708,
            700,
            707,
            712,
            695,
            666,
            553,
            463,
            387,
            316,
            284,
            259,
            234,
            220,
            204,
            196,
            171,
            175,
            166,
            175,
            155,
        ],
        dtype=float,
    )
    idx = np.repeat([0, 1, 2], [8, 9, 9])
    ep = Epochs(idx, (200, 1800, 3600), 1800, "test")
    steps = 200.0 * np.arange(1, loss.size + 1)
    s = shape(steps, loss, loss - np.median(loss), ep)
    assert s is not None
    assert not s.jump_in_rows, s  # the rows step by +5 and -25 where the lines read +236
    assert not s.sawtooth


def test_sawtooth_over_short_epochs_still_found() -> None:
    # the same short epochs, but the loss climbs back at every boundary (length-sorted order)
    rng = np.random.default_rng(7)
    per, k = 9, 4
    pos = np.tile(np.arange(per) / (per - 1), k)
    idx = np.repeat(np.arange(k), per)
    loss = 3.0 - 0.1 * idx - 1.0 * pos + rng.normal(0, 0.03, per * k)
    ep = Epochs(idx, tuple(range(1, per * k + 1, per)), per, "test")
    s = shape(np.arange(per * k) + 1.0, loss, loss - loss.mean(), ep)
    assert s is not None and s.jump_in_rows and s.sawtooth, s
    assert s.row_jump > 0.5
