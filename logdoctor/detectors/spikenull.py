"""Heavy-tailed nulls for spike severity: how big and how many spikes noise alone produces.

The robust residuals of healthy real runs (docs/detectors.md) have Student-t tails with about 3-4
degrees of freedom, far heavier than Gaussian: in a run of n rows, noise alone reaches robust z of
15-30. A spike is a warning only when noise of that kind would reach it in fewer than ``alpha`` of
runs as long; smaller ones stay in the report as information.
"""

from __future__ import annotations

import math
from functools import lru_cache

from logdoctor.stats.distributions import binom_sf, poisson_ppf, t_ppf, t_sf


@lru_cache(maxsize=32)
def _z_to_t(df: float) -> float:
    """Robust z (MAD-scaled) -> Student-t units: the t's MAD times 1.4826."""
    return t_ppf(0.75, df) * 1.4826


def run_p_value(z: float, n: int, df: float) -> float:
    """P(some row of n rows of Student-t(df) noise reaches robust z >= ``z``)."""
    per_row = t_sf(z * _z_to_t(df), df)
    return float(-math.expm1(n * math.log1p(-per_row)))


def null_count_limit(n: int, z: float, df: float, alpha: float) -> int:
    """The number of rows at robust z >= ``z`` that n rows of Student-t(df) noise exceed only with
    probability ``alpha`` (Poisson approximation)."""
    lam = n * t_sf(z * _z_to_t(df), df)
    return poisson_ppf(1.0 - alpha, lam)


def chance_coincidence_p(rate: float, width: int, trials: int, hits: int) -> float:
    """P(at least ``hits`` of ``trials`` loss spikes meet a grad-norm spike within ``width`` rows by
    chance), when a fraction ``rate`` of grad-norm rows are spikes anyway."""
    if hits <= 0:
        return 1.0
    p = 1.0 - (1.0 - min(max(rate, 0.0), 1.0)) ** width
    return binom_sf(hits - 1, trials, p)
