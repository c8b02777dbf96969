"""Work shared between callers instead of repeated (issue 33 point 1) gives the numbers each caller computed itself.

Each shared quantity is compared bit for bit with the code it replaced, on random and adversarial
inputs (NaN, ties, constant runs, short series).
"""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest
from scipy import stats

from logdoctor.detectors import robust
from logdoctor.diagnosis import megabatch as mb
from logdoctor.structure import columns


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64)  # owns its memory
    a.setflags(write=False)
    return a


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(33)
    out = [
        rng.normal(size=5000),
        rng.lognormal(1, 0.5, 3000),
        np.repeat(rng.integers(0, 4, 300).astype(float), 7),  # ties everywhere
        np.full(50, 2.5),  # constant
        np.array([1.0, 2.0]),  # too short for a noise scale
        np.array([]),
        np.r_[rng.normal(size=200), np.nan, rng.normal(size=200)],  # a NaN (medians give NaN)
        np.r_[np.zeros(100), 1e300, -1e300, np.zeros(100)],
    ]
    return out


# --- structure.columns.derived ------------------------------------------------------------------


def test_derived_is_computed_once_per_read_only_array_and_handed_out_read_only() -> None:
    calls: list[int] = []

    def twice(a: np.ndarray) -> np.ndarray:
        calls.append(1)
        return a * 2

    a = _frozen(np.arange(5.0))
    first = columns.derived(a, "twice", twice)
    assert columns.derived(a, "twice", twice) is first and len(calls) == 1
    np.testing.assert_array_equal(first, a * 2)
    with pytest.raises(ValueError):
        first[0] = 1.0  # no caller can change what the next one reads
    assert columns.derived(a, "other", lambda v: float(v.sum())) == 10.0  # another name: its own value


def test_derived_recomputes_for_arrays_that_may_change() -> None:
    calls: list[int] = []

    def total(a: np.ndarray) -> float:
        calls.append(1)
        return float(a.sum())

    w = np.arange(4.0)  # writeable
    assert columns.derived(w, "sum", total) == 6.0
    w[0] = 10.0
    assert columns.derived(w, "sum", total) == 16.0
    base = np.arange(4.0)
    view = base[1:]
    view.setflags(write=False)  # read-only, but its base is not: not remembered
    assert columns.derived(view, "sum", total) == 6.0
    base[1] = 5.0
    assert columns.derived(view, "sum", total) == 10.0
    assert len(calls) == 4


def test_derived_entries_go_with_their_array() -> None:
    a = _frozen(np.arange(3.0))
    columns.derived(a, "sum", lambda v: float(v.sum()))
    key = id(a)
    assert key in columns._DERIVED
    del a
    gc.collect()
    assert key not in columns._DERIVED


# --- robust: the log and the noise scale, shared -----------------------------------------------


def _old_noise_sigma(x: np.ndarray) -> float:
    """robust.noise_sigma before sharing (np.median spelled out)."""
    if x.size < 3:
        return 0.0
    d = np.diff(x)
    m = np.median(d)
    return float(robust.MAD_TO_SIGMA * np.median(np.abs(d - m)) / np.sqrt(2.0))


@pytest.mark.parametrize("i", range(8))
def test_noise_sigma_shared_is_the_number_computed_alone(i: int) -> None:
    x = _inputs()[i]
    want = _old_noise_sigma(x.copy())
    ro = _frozen(x)
    for got in (robust.noise_sigma(ro), robust.noise_sigma(ro), robust.noise_sigma(x.copy())):
        assert got == want or (math.isnan(got) and math.isnan(want))
    np.testing.assert_array_equal(ro, x)  # the shared input is left as it was


def test_transformed_is_the_log_taken_once() -> None:
    rng = np.random.default_rng(1)
    vals = _frozen(rng.lognormal(0, 2, 1000))
    s = robust.Series(np.arange(1000), vals, np.arange(1000), True)
    y = s.transformed()
    np.testing.assert_array_equal(y, np.log(vals))
    assert s.transformed() is y and not y.flags.writeable
    flat = robust.Series(np.arange(3), _frozen(np.array([-1.0, 0.0, 1.0])), np.arange(3), False)
    assert flat.transformed() is flat.values


# --- megabatch: the folded test's rows scaled once for every period -------------------------


def _old_folded(steps: np.ndarray, resid: np.ndarray, period: float, stride: float) -> tuple[float, float]:
    """megabatch.folded before its scaled rows were shared (scipy's F tail in place of f_sf)."""
    ok = np.isfinite(resid)
    y, t = resid[ok], steps[ok].astype(float)
    bins = int(np.clip(round(period / max(stride, 1.0)), 2, 20))
    if y.size < 10 * bins:
        return 1.0, 0.0
    b = np.minimum((((t - t[0]) % period) / period * bins).astype(int), bins - 1)
    count = np.bincount(b, minlength=bins).astype(float)
    if np.any(count < 3):
        return 1.0, 0.0
    y = (y - np.median(y)) / (np.ptp(y) or 1.0)
    mean = np.bincount(b, y, minlength=bins) / count
    ssb = float(np.sum(count * (mean - y.mean()) ** 2))
    ssw = float(np.sum((y - mean[b]) ** 2))
    f = (ssb / (bins - 1)) / max(ssw / (y.size - bins), 1e-300)
    return mb.f_sf(f, bins - 1, y.size - bins), ssb / max(ssb + ssw, 1e-300)


def _resid_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    n = 4000
    steps = np.arange(1, n + 1) * 2
    wave = np.sin(2 * np.pi * np.arange(n) / 50)
    with_nan = rng.normal(size=n) + wave
    with_nan[::97] = np.nan
    return [
        (steps, rng.normal(size=n)),
        (steps, rng.normal(size=n) + wave),
        (steps, with_nan),
        (steps, np.full(n, 3.0)),  # constant: range 0
        (steps, np.round(rng.normal(size=n), 1)),  # ties
        (steps[:30], rng.normal(size=30)),  # too short for most periods
    ]


@pytest.mark.parametrize("case", range(6))
def test_folded_with_shared_rows_equals_each_test_alone(case: int) -> None:
    steps, resid = _resid_cases()[case]
    rows = mb._Folding(steps, resid)
    for period in (4.0, 10.0, 25.0, 50.0, 100.0, 333.3):
        for stride in (1.0, 2.0):
            want = _old_folded(steps, resid, period, stride)
            assert mb._folded_on(rows, period, stride) == want
            assert mb.folded(steps, resid, period, stride) == want


def test_old_folded_reference_is_scipy_anova() -> None:
    """The reference above is a one-way ANOVA (so the equality tests compare the right thing)."""
    rng = np.random.default_rng(3)
    steps, resid = np.arange(600), rng.normal(size=600) + np.sin(np.arange(600) / 3)
    p, _ = _old_folded(steps, resid, 12.0, 1.0)
    b = np.minimum(((steps % 12.0) / 12.0 * 12).astype(int), 11)
    want = stats.f_oneway(*(resid[b == k] for k in range(12))).pvalue
    assert p == pytest.approx(want, rel=1e-6, abs=1e-300)


def test_match_folded_is_the_best_of_the_tests_alone() -> None:
    rng = np.random.default_rng(11)
    n = 6000
    steps = np.arange(1, n + 1)
    resid = rng.normal(size=n) + 0.8 * np.sin(2 * np.pi * steps / 50)
    got = mb.match_folded(steps, resid, 1.0, None, False)
    best = None
    for _m, _k, e in mb.candidates_logged(1.0, None, False):
        p, r2 = _old_folded(steps, resid, e, 1.0)
        if p < mb.FOLD_P and r2 >= mb.FOLD_R2 and (best is None or best[2] < r2):
            best = (e, p, r2)
    assert best is not None and got is not None
    assert (got.period, got.p_value, got.r2) == best


# --- lengthstats.relative_spread: quantiles of the sorted values --------------------------------


def _old_relative_spread(x: np.ndarray) -> float:
    f = x[np.isfinite(x)]
    if f.size < 2:
        return 0.0
    q1, med, q3 = np.quantile(f, [0.25, 0.5, 0.75])
    return float((q3 - q1) / abs(med)) if med else 0.0


@pytest.mark.parametrize("i", range(8))
def test_relative_spread_is_the_quantiles_of_the_values(i: int) -> None:
    from logdoctor.diagnosis import lengthstats

    rng = np.random.default_rng(i)
    x = _inputs()[i]
    counts = rng.integers(1, 3000, 20_000).astype(float)  # batch counts: few distinct values
    counts[rng.random(counts.size) < 0.01] = np.inf
    for v in (x, counts, -counts, np.r_[counts, np.nan]):
        want = _old_relative_spread(v)
        got = lengthstats.relative_spread(v)
        assert got == want or (math.isnan(got) and math.isnan(want))
