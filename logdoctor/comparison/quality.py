"""The loss at matched steps and tokens with a block-bootstrap interval; steps/tokens to reach a loss."""

from __future__ import annotations

import math

import numpy as np

from logdoctor.comparison.result import Axis, Matched, Symptom
from logdoctor.comparison.series import RunSeries
from logdoctor.stats.rolling import rolling_median

#: Where along the overlap of the two runs the loss is compared.
FRACTIONS = (0.5, 1.0)
#: Each run's loss level at a point is the median of its values within this fraction of the overlap.
WINDOW_FRACTION = 0.05
#: Fewer values than this in a run's window: that point is not compared.
MIN_WINDOW = 8
BOOTSTRAP = 500
#: A loss difference smaller than this fraction of the baseline's level is "same" however significant:
#: runs of one recipe that differ only in the seed end within about 1% of each other in loss (seed
#: spread of final LM losses), so a smaller change is not one a person would act on.
PRACTICAL = 0.01


def nice(x: float, lo: float, hi: float) -> float:
    """``x`` rounded to two significant digits (down, if rounding leaves [lo, hi]); else ``x``."""
    if x <= 0:
        return x
    digits = 1 - math.floor(math.log10(x))
    for r in (round(x, digits), math.floor(x * 10**digits) / 10**digits):
        if lo <= r <= hi:
            return float(f"{r:.2g}")
    return float(x)


def block_medians(values: np.ndarray, rng: np.random.Generator, n_boot: int = BOOTSTRAP) -> np.ndarray:
    """Medians of ``n_boot`` moving-block bootstrap resamples (blocks of ~n^(1/3) neighbours keep the
    short-range correlation of training noise)."""
    n = values.size
    b = max(1, round(n ** (1 / 3)))
    starts = rng.integers(0, n - b + 1, size=(n_boot, -(-n // b)))
    idx = (starts[:, :, None] + np.arange(b)).reshape(n_boot, -1)[:, :n]
    return np.median(values[idx], axis=1)


def _window(
    x: np.ndarray, y: np.ndarray, at: float, half: float, lo: float, hi: float, whole: bool = False
) -> np.ndarray:
    """The values within ``half`` of ``at``; ``whole``: the window is shifted inside [lo, hi] so that
    it keeps its full width (whole length cycles) at the ends of the overlap."""
    start, end = max(lo, at - half), min(hi, at + half)
    if whole:
        start = max(lo, min(at - half, hi - 2 * half))
        end = min(hi, start + 2 * half)
    sel = (x >= start) & (x <= end)
    return y[sel]


def window_half(xb: np.ndarray, xc: np.ndarray, lo: float, hi: float) -> float:
    """Half the window: WINDOW_FRACTION of the overlap, widened (up to a quarter of it) until the
    sparser run's typical spacing gives MIN_WINDOW values."""
    spacing = max(float(np.median(np.diff(x))) if x.size > 1 else 0.0 for x in (xb, xc))
    return min(max(WINDOW_FRACTION * (hi - lo), spacing * MIN_WINDOW), (hi - lo) / 4)


def matched(
    axis: Axis,
    xb: np.ndarray,
    yb: np.ndarray,
    xc: np.ndarray,
    yc: np.ndarray,
    rng: np.random.Generator,
    cycle: float | None = None,
) -> tuple[list[Matched], str | None]:
    """The loss of both runs at points across their overlap on ``axis``, or why there are none.

    ``cycle``: a length cycle (on this axis) that either run's loss follows; each window then spans
    at least one whole cycle, so that both runs are measured over the same mix of batch lengths.
    """
    lo, hi = max(xb[0], xc[0]), min(xb[-1], xc[-1])
    if hi <= lo:
        return [], f"{axis}: the runs do not overlap"
    half = window_half(xb, xc, lo, hi)
    whole = cycle is not None and cycle > 0
    if cycle is not None and cycle > 0:
        half = min(max(half, cycle / 2), (hi - lo) / 2)
    out = []
    for frac in FRACTIONS:
        at = nice(lo + frac * (hi - lo), lo, hi)
        wb, wc = _window(xb, yb, at, half, lo, hi, whole), _window(xc, yc, at, half, lo, hi, whole)
        if min(wb.size, wc.size) < MIN_WINDOW:
            continue
        diffs = block_medians(wc, rng) - block_medians(wb, rng)
        q_lo, q_hi = np.quantile(diffs, [0.025, 0.975])
        level = float(np.median(wb))
        out.append(Matched(axis, at, level, float(np.median(wc)), float(q_lo), float(q_hi), PRACTICAL * abs(level)))
    return out, None if out else f"{axis}: too few logged values where the runs overlap"


def compare_loss(
    sb: RunSeries, sc: RunSeries, seed: int = 0, cycle_steps: float | None = None, cycle_tokens: float | None = None
) -> tuple[list[Matched], list[str]]:
    """Matched points by step and, when both runs count tokens, by tokens; plus what could not be
    matched. The cycles make each window span whole length cycles (compare/likewise.py)."""
    rng = np.random.default_rng(seed)
    points, why = [], []
    got, reason = matched("steps", sb.steps, sb.loss, sc.steps, sc.loss, rng, cycle_steps)
    points += got
    why += [reason] if reason else []
    if sb.tokens is None or sc.tokens is None:
        side = "baseline" if sb.tokens is None else "candidate"
        why.append(f"tokens: not logged in the {side}")
    else:
        got, reason = matched("tokens", sb.tokens, sb.loss, sc.tokens, sc.loss, rng, cycle_tokens)
        points += got
        why += [reason] if reason else []
    return points, why


def ceil3(x: float) -> float:
    """``x`` rounded up to three significant digits (a level the run did reach, printed short)."""
    if x == 0 or not math.isfinite(x):
        return x
    d = 2 - math.floor(math.log10(abs(x)))
    return float(f"{math.ceil(x * 10**d) / 10**d:.3g}")


def _smooth(y: np.ndarray) -> np.ndarray:
    return rolling_median(y, max(5, y.size // 50) | 1)


def _first_below(x: np.ndarray | None, smooth: np.ndarray, level: float) -> float | None:
    hit = np.flatnonzero(smooth <= level)
    return None if x is None or hit.size == 0 else float(x[hit[0]])


def reach(sb: RunSeries, sc: RunSeries) -> list[Symptom]:
    """Steps (and tokens) each run took to bring its smoothed loss down to two levels both reach."""
    if min(sb.loss.size, sc.loss.size) < MIN_WINDOW:
        return []
    mb, mc = _smooth(sb.loss), _smooth(sc.loss)
    floor = max(float(mb.min()), float(mc.min()))
    start = min(float(mb[0]), float(mc[0]))
    if start <= floor:
        return []
    out = []
    for frac in (0.5, 0.0):
        level = float(f"{floor + frac * (start - floor):.3g}")
        level = max(level, floor) if frac else ceil3(floor)
        out.append(
            Symptom(
                f"steps_to_loss_{level:g}",
                f"steps to loss {level:g}",
                "steps",
                _first_below(sb.steps, mb, level),
                _first_below(sc.steps, mc, level),
            )
        )
        if sb.tokens is not None and sc.tokens is not None:
            out.append(
                Symptom(
                    f"tokens_to_loss_{level:g}",
                    f"tokens to loss {level:g}",
                    "tokens",
                    _first_below(sb.tokens, mb, level),
                    _first_below(sc.tokens, mc, level),
                )
            )
    return out
