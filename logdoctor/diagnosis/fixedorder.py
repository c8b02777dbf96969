"""Batches fed in the same order every epoch, seen in the loss alone: the same position, the same loss.

Batches built once and fed in a fixed order (a DataLoader without shuffle over pre-built batches, a
sorted list) give each position in the epoch the same batch every epoch, so the loss's fast
component (its smooth within-epoch shape removed) at position p in epoch e and in epoch e+1 are
strongly correlated (r 0.9 or more on real logs); any per-epoch shuffle gives about 0. The null is
the same correlation with the next epoch shifted by s rows (s away from 0): it keeps each epoch's
own noise and autocorrelation and breaks only the position match. The threshold comes from that
null, not from any simulator: the observed r must stand ``MIN_Z`` null standard deviations above the
null's mean and above every shifted r.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from logdoctor.diagnosis.epochs import Epochs
from logdoctor.stats.rolling import rolling_median

#: Rows per epoch pair the test needs (fewer: no claim either way).
MIN_PAIRS = 20
#: How far the observed r must stand above the shifted-position null, in its standard deviations
#: (one-sided normal tail 2.9e-7: a run-level false alarm far below one in a million epochs pairs).
MIN_Z = 5.0
#: Shifts tried for the null (each a circular shift of the next epoch's rows by s, 2 <= s).
NULL_SHIFTS = 199
#: At most this many consecutive epoch pairs, and positions per pair, enter the test (bounded cost
#: on million-step logs; more adds nothing to a correlation already measured on thousands of pairs).
MAX_EPOCH_PAIRS, MAX_POSITIONS = 8, 5000
#: Rows of the centred running median removed from each epoch (its smooth within-epoch shape: a
#: sawtooth, a running average's reset, an lr cycle), so that only batch-to-batch variation is compared.
SMOOTH_ROWS = 9


@dataclass(frozen=True, slots=True)
class FixedOrder:
    """The same-position correlation of consecutive epochs and its shifted-position null."""

    r: float
    null_mean: float
    null_sd: float
    z: float
    p_value: float
    pairs: int
    epoch_pairs: int
    null_size: int

    @property
    def fixed(self) -> bool:
        """The loss repeats position by position beyond every shifted alignment."""
        return self.z >= MIN_Z and self.p_value * (self.null_size + 1) <= 1.0


def _highpass(v: np.ndarray) -> np.ndarray:
    """``v`` minus its centred running median over ``SMOOTH_ROWS`` rows (edges: the nearest value repeated)."""
    return v - rolling_median(v, SMOOTH_ROWS, "nearest")


def epoch_slices(epoch: np.ndarray, limit: int = MAX_EPOCH_PAIRS + 1) -> list[tuple[int, int]]:
    """Row ranges (start, end) of the first ``limit`` epochs, each cut to ``MAX_POSITIONS`` rows (rows
    are in step order, so an epoch is a contiguous run of its label): bounded work on any log."""
    if epoch.size == 0:
        return []
    bounds = np.r_[0, np.flatnonzero(np.diff(epoch) != 0) + 1, epoch.size]
    return [(int(a), int(min(b, a + MAX_POSITIONS))) for a, b in pairwise(bounds)][:limit]


def _epoch_series(steps: np.ndarray, loss: np.ndarray, epochs: Epochs) -> list[dict[int, float]]:
    """Each epoch's high-passed loss by position in the epoch (steps since its first step)."""
    out: list[dict[int, float]] = []
    for a, b in epoch_slices(epochs.index):
        v = loss[a:b]
        if b - a < MIN_PAIRS or not np.isfinite(v).all():
            out.append({})
            continue
        pos = steps[a:b] - steps[a]
        out.append(dict(zip(pos.tolist(), _highpass(v).tolist(), strict=True)))
    return out


def _pairs(series: list[dict[int, float]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Aligned (epoch e, epoch e+1) values at the positions both logged, per consecutive pair."""
    out: list[tuple[np.ndarray, np.ndarray]] = []
    for a, b in pairwise(series):
        common = sorted(a.keys() & b.keys())[:MAX_POSITIONS]
        if len(common) >= MIN_PAIRS and len(out) < MAX_EPOCH_PAIRS:
            out.append((np.array([a[p] for p in common]), np.array([b[p] for p in common])))
    return out


def _firsts(pairs: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The first epoch of every pair, each standardised on its own, end to end (shift-free: computed once)."""
    return np.concatenate([(a - a.mean()) / (a.std() or 1.0) for a, _ in pairs])


def _r(pairs: list[tuple[np.ndarray, np.ndarray]], shift: int = 0, x: np.ndarray | None = None) -> float:
    """Pearson r over every pair, each epoch standardised on its own, the second shifted by ``shift``
    (``x``: ``_firsts(pairs)`` when already computed)."""
    ys = []
    for _, b in pairs:
        y = np.roll(b, shift)
        ys.append((y - y.mean()) / (y.std() or 1.0))
    return float(np.mean((_firsts(pairs) if x is None else x) * np.concatenate(ys)))


#: Elements of one block of shifted rows in ``_shifted_rs`` (bounded memory on long epochs).
_BLOCK = 1 << 20


def _shifted_rs(pairs: list[tuple[np.ndarray, np.ndarray]], shifts: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``_r(pairs, s, x)`` for every shift ``s`` at once, equal to it bit for bit: each shift is a row
    (numpy reduces each row of a contiguous matrix as it reduces one array), the rows in blocks."""
    out = np.empty(shifts.size)
    rows = max(1, _BLOCK // max(1, x.size))
    for i in range(0, shifts.size, rows):
        sh = shifts[i : i + rows, None]
        ys = []
        for _, b in pairs:
            y = b[(np.arange(b.size) - sh) % b.size]  # row k: np.roll(b, sh[k])
            sd = y.std(axis=1, keepdims=True)
            sd[sd == 0] = 1.0
            ys.append((y - y.mean(axis=1, keepdims=True)) / sd)
        out[i : i + rows] = np.mean(x * np.concatenate(ys, axis=1), axis=1)
    return out


def fixed_order(steps: np.ndarray, loss: np.ndarray, epochs: Epochs | None) -> FixedOrder | None:
    """The test on a run's loss; None without two epochs of at least ``MIN_PAIRS`` common positions."""
    if epochs is None or len(np.unique(epochs.index)) < 2:
        return None
    pairs = _pairs(_epoch_series(steps, loss, epochs))
    if not pairs:
        return None
    shortest = min(a.size for a, _ in pairs)
    shifts = np.unique(np.linspace(2, shortest - 2, NULL_SHIFTS).round().astype(int))
    x = _firsts(pairs)
    null = _shifted_rs(pairs, shifts, x)
    r = _r(pairs, 0, x)
    sd = float(null.std()) or 1e-12
    return FixedOrder(
        r=round(r, 4),
        null_mean=round(float(null.mean()), 4),
        null_sd=round(sd, 4),
        z=round((r - float(null.mean())) / sd, 2),
        p_value=float((1 + np.count_nonzero(null >= r)) / (1 + null.size)),
        pairs=int(sum(a.size for a, _ in pairs)),
        epoch_pairs=len(pairs),
        null_size=int(null.size),
    )


def same_order_share(ids: np.ndarray, epoch: np.ndarray) -> float | None:
    """With batch ids (fingerprints or signatures) per logged row: the share of positions at which
    consecutive epochs hold the same batch (1.0: the same batches in the same order every epoch);
    None with fewer than two epochs of ``MIN_PAIRS`` rows."""
    same = total = 0
    for (a, b), (c, d) in pairwise(epoch_slices(epoch)):
        k = min(b - a, d - c)
        if k >= MIN_PAIRS:
            same += int(np.count_nonzero(ids[a : a + k] == ids[c : c + k]))
            total += k
    return same / total if total else None
