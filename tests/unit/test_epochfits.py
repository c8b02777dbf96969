"""Per-segment fits in one pass (diagnosis/epochfits.py) agree with np.polyfit per segment to 1e-9.

The closed forms run only above ``BATCHED_ROWS`` rows; below it epochs.shape calls np.polyfit as
before (the fixtures, real logs and gold files keep their numbers bit for bit: check.sh).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from logdoctor.diagnosis import epochfits
from logdoctor.diagnosis import epochs as ep

#: The stated tolerance: a fitted value within 1e-9 of the data's scale (max |y| of its segment).
TOL = 1e-9


def _old_end_value(x: np.ndarray, y: np.ndarray, at: float) -> float:
    if x.size < 2 or np.ptp(x) == 0:
        return float(np.mean(y))
    b, a = np.polyfit(x, y, 1)
    return float(a + b * at)


def _segments(seed: int, offset: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segments of many kinds: long and short, noisy, tied, constant x, one row, two rows."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for n in (1, 2, 3, 8, 50, 500, 2500, 2500, 7, 100, 100, 100):
        x = offset + np.sort(rng.choice(10 * n + 10, n, replace=False)).astype(float)
        y = 3.0 + 0.001 * (x - offset) + rng.normal(0, 0.3, n)
        xs.append(x)
        ys.append(y)
    xs[9] = np.full(100, offset + 5.0)  # one x: the mean
    ys[10] = np.round(ys[10], 1)  # ties in y
    ys[11] = np.full(100, 2.5)  # constant y
    lengths = np.array([x.size for x in xs])
    return np.concatenate(xs), np.concatenate(ys), lengths


@pytest.mark.parametrize(("seed", "offset"), [(0, 0.0), (1, 5e5), (2, 1e7), (3, -3.0)])
def test_line_values_agree_with_polyfit(seed: int, offset: float) -> None:
    x, y, lengths = _segments(seed, offset)
    starts = np.r_[0, np.cumsum(lengths)[:-1]]
    rng = np.random.default_rng(seed)
    at = np.array([x[a : a + n].max() + rng.uniform(0, 5) for a, n in zip(starts, lengths, strict=True)])
    got = epochfits.line_values(x, y, lengths, at)
    for i, (a, n) in enumerate(zip(starts, lengths, strict=True)):
        want = _old_end_value(x[a : a + n], y[a : a + n], at[i])
        assert abs(got[i] - want) <= TOL * np.abs(y[a : a + n]).max(), (i, got[i], want)


def _old_bias(x: np.ndarray, v: np.ndarray) -> float:
    if x.size < 8 or np.ptp(x) == 0:
        return 0.0
    line, quad = np.polyfit(x, v, 1), np.polyfit(x, v, 2)
    return float(np.polyval(line, x.max()) - np.polyval(quad, x.max()))


@pytest.mark.parametrize("seed", range(4))
def test_line_minus_quadratic_agrees_with_polyfit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for n in (3, 7, 8, 9, 40, 400, 5000, 5000, 60, 60):
        x = np.sort(rng.random(n))
        xs.append(x)
        ys.append(2.0 + np.exp(-4 * x) + rng.normal(0, 0.05, n))  # a decaying, curved epoch
    xs[8] = np.full(60, 0.5)  # one x: 0.0
    xs[9] = np.repeat([0.1, 0.9], 30)  # two distinct x: the quadratic is rank-deficient
    lengths = np.array([x.size for x in xs])
    got, redo = epochfits.line_minus_quadratic(np.concatenate(xs), np.concatenate(ys), lengths)
    assert redo.tolist() == [False] * 9 + [True]  # left to polyfit's minimum-norm solution
    for i, (x, v) in enumerate(zip(xs, ys, strict=True)):
        if redo[i]:
            continue
        want = _old_bias(x, v)
        assert abs(got[i] - want) <= TOL * np.abs(v).max(), (i, got[i], want)
        if x.size < 8 or np.ptp(x) == 0:
            assert got[i] == 0.0


def _run(n_epochs: int, spe: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, ep.Epochs]:
    rng = np.random.default_rng(seed)
    steps = np.arange(1, n_epochs * spe + 1)
    phase = (np.arange(steps.size) % spe) / spe
    loss = 2.0 + 1.0 / np.sqrt(steps / 100) + 0.05 * phase + rng.normal(0, 0.02, steps.size)
    resid = loss - loss.mean()
    epochs = ep.Epochs(
        np.repeat(np.arange(n_epochs), spe), tuple(1 + e * spe for e in range(n_epochs)), spe, "epoch column"
    )
    return steps, loss, resid, epochs


def test_epoch_shape_of_a_long_run_agrees_with_the_polyfit_path(monkeypatch: pytest.MonkeyPatch) -> None:
    steps, loss, resid, epochs = _run(40, 3000, 5)  # 120,000 rows: above the threshold
    assert steps.size > epochfits.BATCHED_ROWS
    calls: list[int] = []
    real = epochfits.line_values
    monkeypatch.setattr(epochfits, "line_values", lambda *a: calls.append(1) or real(*a))
    fast = ep.shape(steps, loss, resid, epochs)
    assert calls  # the closed forms ran
    monkeypatch.setattr(epochfits, "BATCHED_ROWS", 10**9)
    calls.clear()
    slow = ep.shape(steps, loss, resid, epochs)
    assert not calls
    assert fast is not None and slow is not None
    for field in dataclasses.fields(slow):
        a, b = getattr(fast, field.name), getattr(slow, field.name)
        assert a == pytest.approx(b, rel=TOL, abs=TOL), field.name
    for rule in ("sawtooth", "staircase", "running_average"):
        assert getattr(fast, rule) == getattr(slow, rule), rule


def test_short_runs_keep_polyfit(monkeypatch: pytest.MonkeyPatch) -> None:
    steps, loss, resid, epochs = _run(5, 200, 6)
    monkeypatch.setattr(epochfits, "line_values", lambda *a: pytest.fail("closed form on a short run"))
    monkeypatch.setattr(epochfits, "line_minus_quadratic", lambda *a: pytest.fail("closed form on a short run"))
    assert ep.shape(steps, loss, resid, epochs) is not None
