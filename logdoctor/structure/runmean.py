"""Metrics logged as a running mean since their epoch began (Keras progress bars), read back as the
mean over each logged interval.

Keras prints ``loss`` and ``acc`` as means over the batches seen so far in the epoch. The first rows
of each epoch then average few batches and swing widely while the last ones barely move, so a
spike detector sees "spikes" at every epoch start and the real per-batch noise is hidden late in
the epoch. The batch position ``k`` (the ``k/N`` counter, else the steps since the epoch began)
undoes it exactly: the mean over the batches between two logged rows ``j < k`` is
``(k·a_k − j·a_j) / (k − j)``.

Test: a running mean's step-to-step change shrinks as ``1/k`` (``Δa ≈ (l_k − a_{k−1}) / k``), a
per-interval value's does not depend on ``k``. The slope of log(median |Δ| per batch) against
log(k), over log-spaced bins of ``k``, is ≈ −1 for a running mean and ≈ 0 otherwise: on 30 real and
simulated logs without running means it lay in −0.18..+0.29 (real Keras progress output −1.16, the
simulator's running mean −0.99). A column is a running mean below ``SLOPE`` = −0.6, well away from
both, with at least ``MIN_BINS`` bins of ``k`` spanning a factor of ``MIN_SPAN``.

The slope alone can be fooled by a run that learns fast over few epochs: a step's own loss whose
noise falls with the loss through the first epoch (Lightning's bar, which prints the step's value:
3 epochs of 40 steps gave slope −0.87). A second test the algebra gives: the mean of losses that are
never negative is never negative, so a column whose logged values are all ``>= 0`` and whose undone
values fall below zero by more than the printed rounding can grow to (``(k + j)·q / (k − j)``, ``q``
half the last printed decimal) was no running mean. Null: true running means give no such value (0
of 21,752 rows over the four runs of the real Keras log, 0 of 483 in the simulated one; rounding
alone gave 3 slightly negative values there, all within the bound), a step-valued loss read as one
gives many (the real NeMo consoles: 43% of the undone values of each). A column is rejected when more than
``MAX_IMPOSSIBLE`` of its undone values are impossible: room for a few misread positions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from logdoctor.model import ACC, BATCHES, EPOCH, LOSS, STEP
from logdoctor.stats.median import median

SLOPE = -0.6
MIN_BINS = 5
MIN_SPAN = 10.0
MIN_PAIRS = 50
#: The slope is read from at most this many consecutive pairs (evenly strided): ample for 12 bins,
#: and a million-row log costs no more than a 100k one.
MAX_PAIRS = 100_000
#: The in-epoch batch counter a parser reads from ``k/N`` progress output.
#: Share of impossible (negative beyond rounding) undone values above which a column of values
#: that are never negative was no running mean (null above: 0 on true running means).
MAX_IMPOSSIBLE = 0.01
#: Decimals a printed value is read to at most (its rounding is half its last decimal).
_MAX_DECIMALS = 8
#: Columns that logs print as running means (the rest are counters, rates or settings).
CANDIDATES = (LOSS, ACC)


@dataclass(frozen=True, slots=True)
class RunningMean:
    """Columns read back from running means, with each column's slope (the test above)."""

    columns: tuple[str, ...]
    slopes: tuple[float, ...]


def position(table: pl.DataFrame) -> np.ndarray | None:
    """Each row's batch position within its epoch (1 = the epoch's first batch), or None."""
    step = table[STEP].to_numpy().astype(float)
    if BATCHES in table.columns:
        k = table[BATCHES].cast(pl.Float64).to_numpy()
        return k if np.isfinite(k).mean() > 0.9 else None
    if EPOCH not in table.columns:
        return None
    ep = table[EPOCH].cast(pl.Float64).fill_null(-1.0).to_numpy()
    start = np.r_[True, ep[1:] != ep[:-1]]
    first = np.flatnonzero(start)
    seg = np.cumsum(start) - 1
    before = np.r_[step[0] - 1.0, step[first[1:] - 1]]  # the last step of the epoch before
    return step - before[seg]


def _steps(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of rows that continue their epoch, gap in batches to the row before)."""
    gap = np.diff(k)
    cont = np.flatnonzero((gap > 0) & np.isfinite(gap)) + 1
    return cont, gap[cont - 1]


def noise_slope(values: np.ndarray, k: np.ndarray) -> float | None:
    """Slope of log(median |Δ| per batch) on log(k); None when the log cannot tell."""
    cont, gap = _steps(k)
    if cont.size > MAX_PAIRS:
        every = -(-cont.size // MAX_PAIRS)
        cont, gap = cont[::every], gap[::every]
    d = np.abs(values[cont] - values[cont - 1]) / gap
    kk = k[cont]
    ok = np.isfinite(d)
    d, kk = d[ok], kk[ok]
    if kk.size < MIN_PAIRS or kk.max() / max(kk.min(), 1.0) < MIN_SPAN:
        return None
    edges = np.unique(np.round(np.geomspace(max(kk.min(), 1.0), kk.max() + 1, 12)))
    b = np.digitize(kk, edges)
    xs, ys = [], []
    for i in np.unique(b):
        m = b == i
        med = float(median(d[m])) if m.sum() >= 5 else 0.0  # np.median's number, without its set-up
        if med > 0:
            xs.append(np.log(median(kk[m])))
            ys.append(np.log(med))
    if len(xs) < MIN_BINS or max(xs) - min(xs) < np.log(MIN_SPAN):
        return None
    return float(np.polyfit(xs, ys, 1)[0])


def undo(values: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Each row's mean over the batches since the row before (its own k at an epoch's start)."""
    out = values.astype(float).copy()
    cont, gap = _steps(k)
    j, kk = k[cont - 1], k[cont]
    out[cont] = (kk * values[cont] - j * values[cont - 1]) / gap
    return out


def _rounding(values: np.ndarray) -> np.ndarray:
    """Half the last decimal each value was printed to (the fewest decimals that give it back)."""
    out = np.full(values.shape, 0.5 * 10.0**-_MAX_DECIMALS)
    left = np.isfinite(values)
    v = np.where(left, values, 0.0)
    for d in range(_MAX_DECIMALS + 1):
        hit = left & (np.abs(v - np.round(v, d)) <= 1e-9 * np.maximum(1.0, np.abs(v)))
        out[hit] = 0.5 * 10.0**-d
        left &= ~hit
    return out


def impossible_share(values: np.ndarray, k: np.ndarray) -> float:
    """Share of the undone values that no mean of the logged (never negative) values could be:
    below zero by more than the printed rounding, grown by the undoing, can account for. 0.0 when
    the column has negative values (a mean of those may be negative) or nothing to undo."""
    finite = values[np.isfinite(values)]
    if finite.size == 0 or finite.min() < 0:
        return 0.0
    cont, gap = _steps(k)
    j, kk = k[cont - 1], k[cont]
    q = _rounding(values)
    undone = (kk * values[cont] - j * values[cont - 1]) / gap
    bound = (kk * q[cont] + j * q[cont - 1]) / gap
    ok = np.isfinite(undone)
    if not ok.any():
        return 0.0
    return float(np.mean(undone[ok] < -bound[ok]))


def deaverage(table: pl.DataFrame, notes: list[str]) -> tuple[pl.DataFrame, RunningMean | None]:
    """Read running-mean columns back as per-interval means; the table unchanged otherwise."""
    if table.height < MIN_PAIRS or LOSS not in table.columns:
        return table, None
    k = position(table)
    if k is None:
        return table, None
    found: dict[str, tuple[float, np.ndarray]] = {}
    for col in (c for c in CANDIDATES if c in table.columns):  # the loss first: no loss, nothing
        values = table[col].cast(pl.Float64).to_numpy()
        slope = noise_slope(values, k)
        if slope is not None and slope <= SLOPE and impossible_share(values, k) <= MAX_IMPOSSIBLE:
            found[col] = (slope, values)
        elif col == LOSS:
            return table, None
    table = table.with_columns(pl.Series(c, undo(values, k)) for c, (_, values) in found.items())
    cols = ", ".join(found)
    notes.append(
        f"{cols}: logged as running means since each epoch began (their step-to-step change shrinks "
        f"as 1/k through the epoch: slope {found[LOSS][0]:.2f}, -1 for a running mean, 0 otherwise); "
        "the analyses read each logged interval's own mean, undone from them"
    )
    return table, RunningMean(tuple(found), tuple(round(slope, 3) for slope, _ in found.values()))
