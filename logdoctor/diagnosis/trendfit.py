"""The least-squares trend fit of a long run by its normal equations (lengthstats.detrend above 100k rows).

``np.linalg.lstsq`` on a million rows x 4 columns copies the basis and runs an SVD solve, twice per
analysis (~0.1-0.13 s at 1M rows, and ~64 MB of fresh memory each). The normal equations need one
pass over the rows (a 4 x 4 Gram matrix), and one refinement step on the residual brings the
solution back to least-squares accuracy. The fitted values (what detrend keeps) agree with lstsq's
to ~1e-13 of the loss's scale (tests/unit/test_trendfit.py checks 1e-9 relative). Not the same
bits: the detrended loss feeds rank statistics whose near-ties may reorder, so p-values computed
from it can move in their 8th digit (canonical 1M: loss_length_p 1.8e-8 relative); the findings
and the verdict of the bench/shapes.py logs at 200k-1M rows are the same. Logs at or below
``BATCHED_ROWS`` rows (every fixture, real log and gold file) keep lstsq and its numbers.
"""

from __future__ import annotations

import numpy as np

#: Above this many rows the trend is fitted by its normal equations.
BATCHED_ROWS = 100_000
#: A Gram matrix above this condition number (nearly dependent columns) is left to lstsq.
_MAX_COND = 1e10


def fit(basis: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray | None:
    """Least-squares coefficients of ``y ~ basis`` (rows weighted 0/1 by ``w``), or None when the
    columns are too nearly dependent for the normal equations (the caller then uses lstsq)."""
    bw = basis if w is None else basis * w[:, None]
    yw = y if w is None else y * w
    gram = bw.T @ bw
    if not np.isfinite(gram).all() or not np.linalg.cond(gram) < _MAX_COND:
        return None
    coef = np.linalg.solve(gram, bw.T @ yw)
    # one refinement step: solve for the correction on the residual (recovers the digits the
    # squared condition number of the normal equations costs)
    coef = coef + np.linalg.solve(gram, bw.T @ (yw - bw @ coef))
    return np.asarray(coef, dtype=np.float64)
