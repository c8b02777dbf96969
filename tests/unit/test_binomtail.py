"""Binomial tails above 100k trials without scipy (stats/binomtail.py) agree with scipy to 1e-9.

Only ``tails.binom_sf`` with more than ``LARGE_N`` trials takes this path (the sign test of a long
run's batch lengths); smaller ones keep their numbers (check.sh, bit for bit).
"""

from __future__ import annotations

import math

import pytest
from scipy import special

from logdoctor.stats import binomtail
from logdoctor.stats import distributions as tails

#: The stated tolerance (relative; absolute below 1e-300).
TOL = 1e-9


def _ks(n: int, p: float) -> list[int]:
    mu, sd = n * p, math.sqrt(n * p * (1 - p))
    around = [int(mu + z * sd) for z in (-40, -8, -3, -1, -0.3, 0, 0.2, 1, 2.5, 6, 15, 38)]
    mode = math.floor((n + 1) * p)
    return sorted({k for k in [0, 1, 2, mode - 2, mode - 1, mode, mode + 1, n - 2, n - 1, *around] if 0 <= k < n})


@pytest.mark.parametrize("n", [100_001, 999_999, 1_000_000, 4_000_001])
@pytest.mark.parametrize("p", [0.5, 0.01, 0.2, 0.77, 0.99, 1e-6])
def test_binomial_tail_agrees_with_scipy(n: int, p: float) -> None:
    for k in _ks(n, p):
        want = float(special.betainc(k + 1.0, n - k, p))  # = scipy.stats.binom.sf(k, n, p)
        got = binomtail.binom_sf(k, n, p, 1.0 - p)
        assert got == pytest.approx(want, rel=TOL, abs=1e-300), (k, got, want)
        assert tails.binom_sf(k, n, p) == got  # the public function takes this path above LARGE_N


def test_small_trials_keep_the_continued_fraction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binomtail, "binom_sf", lambda *a: pytest.fail("summed tail below LARGE_N"))
    assert tails.binom_sf(40_000, 90_000, 0.5) == pytest.approx(1.0)
    assert tails.binom_sf(5, 100_000, 0.0) == 0.0  # p of 0 or 1: the general path's edge cases


def test_a_long_sign_test_imports_no_scipy() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from logdoctor.stats.distributions import binom_sf; "
        "v = binom_sf(500_700 - 1, 1_000_000, 0.5); assert 0 < v < 0.1, v; "
        "print(sorted(m for m in sys.modules if m.startswith('scipy.special')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
