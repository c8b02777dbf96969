"""ruptures' compiled search loaded alone answers exactly as ruptures.KernelCPD does."""

from __future__ import annotations

import numpy as np
import pytest

from logdoctor.detectors.kernelcpd import _compiled_pelt, pelt_l2


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("min_size", [1, 2, 5])
def test_compiled_search_equals_ruptures_kernelcpd(seed: int, min_size: int) -> None:
    import ruptures as rpt

    assert _compiled_pelt() is not None, "ruptures' compiled search could not be loaded on its own"
    rng = np.random.default_rng(seed)
    levels = rng.normal(0, 3, size=6).repeat(rng.integers(20, 120, size=6))
    y = levels + rng.standard_t(3, size=levels.size)
    for pen in (2.0, 10.0, 50.0):
        want = rpt.KernelCPD(kernel="linear", min_size=min_size, jump=1).fit(y.reshape(-1, 1)).predict(pen=pen)
        assert pelt_l2(y, pen, min_size) == [int(k) for k in want]


def test_no_admissible_split_gives_one_segment() -> None:
    assert pelt_l2(np.arange(5.0), 1.0, 3) == [5]
