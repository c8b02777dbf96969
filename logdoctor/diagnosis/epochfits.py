"""Least-squares lines and quadratics over many row segments at once (the epoch shape of long runs).

``epochs.shape`` fits a line (and, for its curvature check, a quadratic) per epoch and per boundary:
~800 ``np.polyfit`` calls at a million rows, each an SVD least-squares solve (~0.25 s in all). Above
``BATCHED_ROWS`` rows these closed forms fit every segment in a few passes over the rows: sums of
centred, scaled abscissae (within [-1, 1]) and their normal equations, solved per segment.

Not the same bits as ``np.polyfit``: both are least-squares solutions to float precision, the SVD of
the scaled Vandermonde matrix there, the normal equations on centred data here (condition number
below ~20 for a quadratic on [-1, 1]). The fitted values agree to ~1e-12 of the data's scale
(tests/unit/test_epochfits.py checks 1e-9 relative on random, tied, constant and short segments).
A log at or below ``BATCHED_ROWS`` rows (every fixture, real log and gold file) keeps ``np.polyfit``.
"""

from __future__ import annotations

import numpy as np

#: Above this many rows the epoch shape's per-segment fits use the closed forms of this module.
BATCHED_ROWS = 100_000


def _starts(lengths: np.ndarray) -> np.ndarray:
    return np.r_[0, np.cumsum(lengths)[:-1]].astype(np.intp)


def _centred(x: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t, centre, half width): ``x`` of each segment moved to [-1, 1]."""
    at = _starts(lengths)
    lo, hi = np.minimum.reduceat(x, at), np.maximum.reduceat(x, at)
    centre = (lo + hi) / 2.0
    half = np.where(hi > lo, (hi - lo) / 2.0, 1.0)
    seg = np.repeat(np.arange(lengths.size), lengths)
    return (x - centre[seg]) / half[seg], centre, half


def line_values(x: np.ndarray, y: np.ndarray, lengths: np.ndarray, at: np.ndarray) -> np.ndarray:
    """For each segment (consecutive rows, ``lengths`` of them, all > 0): its least-squares line
    through (x, y) read at ``at``; the mean of y where the segment has under two rows or one x."""
    starts = _starts(lengths)
    t, centre, half = _centred(x, lengths)
    n = lengths.astype(np.float64)
    s1 = np.add.reduceat(t, starts)
    s2 = np.add.reduceat(t * t, starts)
    m0 = np.add.reduceat(y, starts)
    m1 = np.add.reduceat(t * y, starts)
    det = n * s2 - s1 * s1
    flat = (lengths < 2) | (np.maximum.reduceat(x, starts) == np.minimum.reduceat(x, starts)) | ~(det > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        c1 = (n * m1 - s1 * m0) / det
        c0 = (m0 - c1 * s1) / n
        out = c0 + c1 * ((at - centre) / half)
    for i in np.flatnonzero(flat).tolist():  # as np.polyfit's callers do: the mean, exactly
        out[i] = float(np.mean(y[starts[i] : starts[i] + lengths[i]]))
    return np.asarray(out, dtype=np.float64)


def line_minus_quadratic(x: np.ndarray, y: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each segment: its least-squares line minus its least-squares quadratic, both read at the
    segment's largest x (0.0 where the segment has under 8 rows or one x, as epochs.shape has it).

    Returns:
        (values, redo): ``redo`` marks the segments whose quadratic is near rank-deficient (few
        distinct x), left to ``np.polyfit``'s minimum-norm solution by the caller.
    """
    starts = _starts(lengths)
    t, _, _ = _centred(x, lengths)
    tmax = np.maximum.reduceat(t, starts)
    p = np.ones_like(t)
    s = [lengths.astype(np.float64)]
    m = [np.add.reduceat(y, starts)]
    for k in range(1, 5):
        p = p * t
        s.append(np.add.reduceat(p, starts))
        if k <= 2:
            m.append(np.add.reduceat(p * y, starts))
    gram = np.stack([np.stack([s[i + j] for j in range(3)], axis=-1) for i in range(3)], axis=-2)
    rhs = np.stack(m, axis=-1)
    spread = np.maximum.reduceat(x, starts) > np.minimum.reduceat(x, starts)
    fit = (lengths >= 8) & spread
    redo = np.zeros(lengths.size, dtype=bool)
    redo[fit] = ~(np.linalg.cond(gram[fit]) < _MAX_COND)
    ok = fit & ~redo
    out = np.zeros(lengths.size)
    if ok.any():
        quad = np.linalg.solve(gram[ok], rhs[ok][..., None])[..., 0]
        line = np.linalg.solve(gram[ok][:, :2, :2], rhs[ok][:, :2, None])[..., 0]
        tm = tmax[ok]
        out[ok] = (line[:, 0] + line[:, 1] * tm) - (quad[:, 0] + (quad[:, 1] + quad[:, 2] * tm) * tm)
    return out, redo


#: Normal equations above this condition number lose more than ~1e-10 of the fit: left to polyfit.
_MAX_COND = 1e5
