"""The numpy path of rolling_median (small inputs) equals scipy.ndimage.median_filter exactly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from logdoctor.detectors import robust


@pytest.mark.parametrize("mode", ["nearest", "mirror", "reflect", "wrap"])
@pytest.mark.parametrize("seed", range(5))
def test_small_path_equals_ndimage(mode: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for n in (2, 3, 7, 30, 301, 1000, 5000):
        x = rng.standard_t(2, size=n)
        x[rng.integers(0, n, size=max(1, n // 10))] = 1.0  # ties
        for window in (2, 3, 8, 31, 301, 5000):
            w = max(1, min(window, n))
            got = robust.rolling_median(x, window, mode=mode)
            want = x if w <= 1 else ndimage.median_filter(x, size=w | 1, mode=mode)
            np.testing.assert_array_equal(got, want, err_msg=f"n={n} window={window}")


def test_large_inputs_still_use_ndimage_and_agree() -> None:
    x = np.random.default_rng(1).normal(size=200_000)
    np.testing.assert_array_equal(robust.rolling_median(x, 31), ndimage.median_filter(x, size=31, mode="nearest"))
