"""Epochs: where they start (logged, given or inferred) and the loss shape across them.

Shapes: a *sawtooth* (the loss drifts within each epoch and jumps back at the boundary: data order),
a *staircase* (the loss steps down at each boundary and does not drift back: memorisation) and a
*running-average reset* (the logged loss is a mean since epoch start: its noise shrinks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from logdoctor.diagnosis import epochfits
from logdoctor.model import EPOCH, Run
from logdoctor.stats.median import median
from logdoctor.stats.ranks import spearman
from logdoctor.stats.scale import MAD_TO_SIGMA


@dataclass(frozen=True, slots=True)
class Epochs:
    """Epoch of each row, the first step of each epoch, and where that came from."""

    index: np.ndarray
    starts: tuple[int, ...]
    steps_per_epoch: int | None
    source: str
    spanned: int | None = None

    @property
    def count(self) -> int:
        """Number of epochs the run covers (complete or not): the run structure's count when
        known (rows logged every k steps can skip epochs), else the epochs seen in the rows."""
        return self.spanned or len(self.starts)


def resolve(run: Run, steps: np.ndarray, inferred: int | None, how: str) -> Epochs | None:
    """Epochs from ``--steps-per-epoch`` when given, else the epoch column, else
    ``run.meta.steps_per_epoch``, else the inferred length."""
    if run.has(EPOCH) and not run.meta.steps_per_epoch_given:
        ep = run.table[EPOCH].cast(float).forward_fill().backward_fill().to_numpy()
        # a fractional epoch is progress (HF): 3.0 ends the third epoch, it starts no fourth
        whole = np.floor(ep) if np.all(ep == np.floor(ep)) else np.maximum(np.ceil(ep) - 1, 0)
        _, idx = np.unique(whole, return_inverse=True)
        starts = steps[np.flatnonzero(np.r_[True, np.diff(idx) != 0])]
        spe = run.meta.steps_per_epoch or (int(np.median(np.diff(starts))) if starts.size > 2 else None)
        spanned = run.meta.structure.epochs if run.meta.structure is not None else None
        return Epochs(idx, tuple(int(s) for s in starts), spe, "epoch column", spanned)
    # a noun: renderers say "(from the {source})"
    given = "--steps-per-epoch value" if run.meta.steps_per_epoch_given else "log's own statement"
    spe, source = run.meta.steps_per_epoch, given
    if not spe and inferred:
        spe, source = inferred, how
    if not spe:
        return None
    origin = 1 if steps[0] >= 1 else 0
    idx = (steps - origin) // spe
    _, idx = np.unique(idx, return_inverse=True)
    starts = steps[np.flatnonzero(np.r_[True, np.diff(idx) != 0])]
    return Epochs(idx, tuple(int(s) for s in starts), int(spe), source)


@dataclass(frozen=True, slots=True)
class EpochShape:
    """The loss pattern across epoch boundaries.

    Attributes:
        jump: median loss jump at an epoch boundary (one epoch's line fit end to the next's start).
        jump_z: ``jump`` over its standard error (a median of ``boundaries`` line-fit jumps).
        jump_agreement: share of boundaries whose jump has the sign of the median jump.
        drift: median within-epoch change (line fit, start to end) over the later epochs.
        sawtooth_ratio: ``-drift / jump``: ≈1 for a sawtooth, ≤0 for a staircase.
        phase_r2: share of the detrended loss variance explained by the position within the epoch.
        noise_ratio: step-to-step noise in the first tenth of epochs over that in their second half.
        noise_trend: rank correlation of that noise with the position in the epoch (≈-1 when it
            shrinks steadily, as a running mean's does; ≈0 when both ends are noisy, as in sorted
            order where both tails of the length distribution change fast).
        boundaries: how many boundaries were measured.
        row_jump: median step across a boundary in the rows themselves (the median of the first
            rows after it minus that of the last rows before it, ``_row_jumps``); NaN when unmeasured.
    """

    jump: float
    jump_z: float
    jump_agreement: float
    drift: float
    sawtooth_ratio: float
    phase_r2: float
    noise_ratio: float
    noise_trend: float
    boundaries: int
    row_jump: float = float("nan")

    @property
    def jump_in_rows(self) -> bool:
        """The fitted jump is in the rows beside the boundary: same sign, at least a quarter of it.

        Lines fitted through epochs of a few rows each bend away from a loss that still falls
        steeply (a run's opening transient), so that their ends read a jump the rows do not show;
        a sawtooth's jump back is there in the rows (about 0.9 of the fitted jump when the medians
        take a tenth of each epoch and the loss drifts back by the jump). Unmeasured counts as in.
        """
        if not np.isfinite(self.row_jump):
            return True
        return bool(np.sign(self.row_jump) == np.sign(self.jump) and abs(self.row_jump) >= 0.25 * abs(self.jump))

    @property
    def running_average(self) -> bool:
        """The logged loss resets each epoch and averages down (noise shrinks through the epoch)."""
        return self.noise_ratio >= 4.0 and self.noise_trend <= -0.7 and self.boundaries >= 1

    @property
    def sawtooth(self) -> bool:
        """Drift within the epoch, jump back at the boundary, consistently."""
        return (
            self.boundaries >= 2
            and abs(self.jump_z) >= 5
            and self.jump_agreement >= 0.75
            and self.sawtooth_ratio >= 0.5
            and self.phase_r2 >= 0.1
            and not self.running_average
            and self.jump_in_rows
        )

    @property
    def staircase(self) -> bool:
        """Consistent downward steps at the boundaries with no drift back up within epochs."""
        return (
            self.boundaries >= 1
            and self.jump_z <= -4
            and self.jump_agreement >= 0.75
            and self.sawtooth_ratio <= 0.25
            and not self.running_average
        )


def _line_fits(pos: np.ndarray, y: np.ndarray, idx: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-epoch least-squares line ``y ~ a + b*pos``; returns (a, b) per epoch."""
    n = np.bincount(idx, minlength=k).astype(float)
    sx, sy = np.bincount(idx, pos, k), np.bincount(idx, y, k)
    sxx, sxy = np.bincount(idx, pos * pos, k), np.bincount(idx, pos * y, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        b = (n * sxy - sx * sy) / (n * sxx - sx * sx)
        a = (sy - b * sx) / n
    return a, b


class _Rows:
    """Row numbers of each epoch: slices of the sorted order, computed once (no O(rows) scan per epoch)."""

    def __init__(self, idx: np.ndarray) -> None:
        order = np.argsort(idx, kind="stable")
        self._order = order
        self._edges = np.searchsorted(idx[order], np.arange(int(idx.max(initial=0)) + 2))

    def __call__(self, e: int) -> np.ndarray:
        return self._order[self._edges[e] : self._edges[e + 1]]


def _end_value(x: np.ndarray, y: np.ndarray, at: float) -> float:
    """A least-squares line through (x, y), evaluated at ``at``."""
    if x.size < 2 or np.ptp(x) == 0:
        return float(np.mean(y))
    b, a = np.polyfit(x, y, 1)
    return float(a + b * at)


def _boundary_jumps(s: np.ndarray, y: np.ndarray, rows: _Rows, starts: np.ndarray, w: int) -> np.ndarray:
    """The loss jump at each boundary after epoch ``e`` in ``starts``: a line through the last ``w``
    rows of epoch e and one through the first ``w`` rows of epoch e+1, both read at the boundary.

    Local fits, not whole-epoch lines: a whole-epoch line through a curved (decaying) loss ends
    below the data, which reads as a jump that the data do not have. Long runs fit every line at
    once (epochfits.py: the same lines to ~1e-12, not the same bits).
    """
    if y.size > epochfits.BATCHED_ROWS and starts.size:
        segs = [seg for e in starts.tolist() for seg in (rows(e + 1)[:w], rows(e)[-w:])]
        idx = np.concatenate(segs)
        at = np.repeat([(s[b[-1]] + s[a[0]]) / 2.0 for a, b in zip(segs[::2], segs[1::2], strict=True)], 2)
        ends = epochfits.line_values(s[idx], y[idx], np.array([seg.size for seg in segs]), at)
        return np.asarray(ends[0::2] - ends[1::2], dtype=float)
    out: list[float] = []
    for e in starts:
        before, after = rows(e)[-w:], rows(e + 1)[:w]
        at = (s[before[-1]] + s[after[0]]) / 2.0
        out.append(_end_value(s[after], y[after], at) - _end_value(s[before], y[before], at))
    return np.asarray(out, dtype=float)


def _curvature_bias(pos: np.ndarray, y: np.ndarray, rows: _Rows, starts: np.ndarray) -> np.ndarray:
    """Per boundary after epoch e: the line's end value minus a quadratic's end value over epoch e
    (long runs: every epoch at once, epochfits.py, but for a quadratic that needs polyfit's care)."""
    if y.size > epochfits.BATCHED_ROWS and starts.size:
        segs = [rows(e) for e in starts.tolist()]
        idx = np.concatenate(segs)
        out, redo = epochfits.line_minus_quadratic(pos[idx], y[idx], np.array([seg.size for seg in segs]))
        for i in np.flatnonzero(redo).tolist():
            out[i] = _one_curvature_bias(pos[segs[i]], y[segs[i]])
        return out
    return np.asarray([_one_curvature_bias(pos[sel], y[sel]) for sel in map(rows, starts)], dtype=float)


def _one_curvature_bias(x: np.ndarray, v: np.ndarray) -> float:
    if x.size < 8 or np.ptp(x) == 0:
        return 0.0
    line, quad = np.polyfit(x, v, 1), np.polyfit(x, v, 2)
    return float(np.polyval(line, x.max()) - np.polyval(quad, x.max()))


def _row_jumps(y: np.ndarray, rows: _Rows, starts: np.ndarray) -> np.ndarray:
    """The step in the rows at each boundary after epoch ``e`` in ``starts``: the median of the
    first rows of epoch e+1 minus that of the last rows of epoch e, a tenth of the shorter epoch
    (at least 2 rows, at most a third of it) on each side."""
    out: list[float] = []
    for e in starts.tolist():
        before, after = rows(e), rows(e + 1)
        n = min(before.size, after.size)
        m = min(max(2, n // 10), max(1, n // 3))
        out.append(float(np.median(y[after[:m]]) - np.median(y[before[-m:]])))
    return np.asarray(out, dtype=float)


def _noise_profile(y: np.ndarray, pos: np.ndarray, idx: np.ndarray) -> tuple[float, float]:
    """Early/late step-to-step noise ratio and the rank trend of the noise over epoch deciles."""
    dn = np.abs(np.diff(y))
    ph = pos[1:]
    same = idx[1:] == idx[:-1]
    early, late = dn[same & (ph < 0.1)], dn[same & (ph >= 0.5)]
    if early.size < 3 or late.size == 0:
        return 1.0, 0.0
    ratio = float(np.median(early) / max(np.median(late), 1e-12))
    dec = np.minimum((ph[same] * 10).astype(int), 9)
    med = [median(dn[same][dec == d]) for d in range(10) if np.any(dec == d)]
    varied = len(med) >= 4 and np.ptp(med) > 0
    trend = spearman(np.arange(len(med), dtype=np.float64), np.asarray(med))[0] if varied else 0.0
    return ratio, trend


def _phase_r2(resid: np.ndarray, phase: np.ndarray) -> float:
    bins = np.minimum((phase * 10).astype(int), 9)
    cnt = np.bincount(bins, minlength=10)
    means = np.bincount(bins, resid, 10) / np.maximum(cnt, 1)
    total = float(np.sum((resid - resid.mean()) ** 2))
    return float(np.sum(cnt * (means - resid.mean()) ** 2) / total) if total > 0 else 0.0


def shape(steps: np.ndarray, loss: np.ndarray, resid: np.ndarray, epochs: Epochs) -> EpochShape | None:
    """Measure the epoch shape of the loss; None with under two epochs of at least 8 rows each."""
    ok = np.isfinite(loss) & np.isfinite(resid)
    idx, s, y, r = epochs.index[ok], steps[ok].astype(float), loss[ok], resid[ok]
    k = int(idx.max()) + 1 if idx.size else 0
    cnt = np.bincount(idx, minlength=k)
    if k < 2 or np.sum(cnt >= 8) < 2:
        return None
    first = np.full(k, np.inf)
    np.minimum.at(first, idx, s)
    last = np.full(k, -np.inf)
    np.maximum.at(last, idx, s)
    span = np.maximum(last - first, 1.0)
    pos = (s - first[idx]) / span[idx]
    a, b = _line_fits(pos, y, idx, k)
    good = cnt >= 8
    pair = good[:-1] & good[1:]
    w = max(8, int(np.median(cnt[good])) // 2)
    whole = (a[1:] - (a[:-1] + b[:-1]))[pair]
    rows = _Rows(idx)
    local = _boundary_jumps(s, y, rows, np.flatnonzero(pair), w)
    # where a curved epoch (a fast early decay) bends its whole-epoch line away from the data at its
    # end, the jump is read from local fits at the boundary instead
    bias = _curvature_bias(pos, y, rows, np.flatnonzero(pair))
    jumps = np.where(np.abs(bias) > 0.5 * np.abs(whole), local, whole) if local.size else whole
    drifts = b[good]
    later = drifts[len(drifts) // 2 :]
    dev = (y - (a[idx] + b[idx] * pos))[good[idx]]  # epochs too short for a line fit give no residuals
    sigma = float(median(np.abs(dev - median(dev)))) * MAD_TO_SIGMA or 1e-12
    m = float(np.median(cnt[good]))
    jump = float(np.median(jumps)) if jumps.size else 0.0
    drift = float(np.median(later))
    agree = float(np.mean(np.sign(jumps) == np.sign(jump))) if jumps.size and jump else 0.0
    noise_ratio, noise_trend = _noise_profile(y, pos, idx)
    row_steps = _row_jumps(y, rows, np.flatnonzero(pair))
    return EpochShape(
        jump=jump,
        jump_z=jump / (1.25 * sigma * np.sqrt(8 / m / max(jumps.size, 1))),
        jump_agreement=agree,
        drift=drift,
        sawtooth_ratio=float(-drift / jump) if jump else 0.0,
        phase_r2=_phase_r2(r, pos),
        noise_ratio=noise_ratio,
        noise_trend=noise_trend,
        boundaries=int(jumps.size),
        row_jump=float(np.median(row_steps)) if row_steps.size else float("nan"),
    )
