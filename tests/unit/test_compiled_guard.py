"""Private compiled functions loaded by file are checked once; a mismatched one falls back to the public API."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from logdoctor.detectors import kernelcpd, robust
from logdoctor.stats import extload, ndmedian


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    kernelcpd._compiled_pelt.cache_clear()
    ndmedian._rank_filter.cache_clear()
    yield
    kernelcpd._compiled_pelt.cache_clear()
    ndmedian._rank_filter.cache_clear()


def _signal() -> np.ndarray:
    rng = np.random.default_rng(3)
    return rng.normal(0, 3, size=8).repeat(rng.integers(5, 40, size=8)) + rng.normal(0, 1, size=1)[0]


def test_guard_accepts_the_installed_ruptures_and_scipy() -> None:
    assert kernelcpd._compiled_pelt() is not None
    assert ndmedian._rank_filter() is not None


def _broken_pelt(x: Any, pen: float) -> Any:  # another signature (one argument fewer)
    return np.zeros(x.shape[0] + 1)


def _reversed_pelt(x: Any, pen: float, min_size: int) -> Any:  # same signature, another meaning
    return np.arange(x.shape[0] + 1)[::-1].copy()


def _raising(*args: Any) -> Any:
    raise SystemError("binding changed")


@pytest.mark.parametrize("fake", [_broken_pelt, _reversed_pelt, _raising])
def test_mismatched_search_falls_back_to_kernelcpd_with_the_same_answer(
    fake: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    y = _signal()
    want = kernelcpd.pelt_l2(y, 10.0, 2)
    kernelcpd._compiled_pelt.cache_clear()
    monkeypatch.setattr(extload, "compiled_function", lambda module, attr: fake)
    assert kernelcpd._compiled_pelt() is None
    assert kernelcpd.pelt_l2(y, 10.0, 2) == want


def _mean_filter(x: Any, origin: int, size: int, out: Any, mode: int, cval: float, org: int) -> None:
    out[:] = np.convolve(np.pad(x, size // 2, mode="edge"), np.ones(size) / size, mode="valid")


def _old_signature(x: Any, size: int, out: Any) -> None:
    out[:] = x


@pytest.mark.parametrize("fake", [_mean_filter, _old_signature, _raising])
def test_mismatched_median_filter_falls_back_with_the_same_answer(
    fake: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    x = _signal()
    want = robust.rolling_median(x, 7)
    ndmedian._rank_filter.cache_clear()
    monkeypatch.setattr(extload, "compiled_function", lambda module, attr: fake)
    assert ndmedian._rank_filter() is None
    assert ndmedian.median_filter(x, 7, "nearest") is None
    np.testing.assert_array_equal(robust.rolling_median(x, 7), want)


def test_guarded_function_is_none_when_the_check_fails_or_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extload, "compiled_function", lambda module, attr: abs)
    assert extload.guarded_function("m.n", "f", lambda fn: fn(-1) == 1) is abs
    assert extload.guarded_function("m.n", "f", lambda fn: fn(-1) == 2) is None
    assert extload.guarded_function("m.n", "f", lambda fn: fn("a") == 1) is None  # TypeError inside the check
