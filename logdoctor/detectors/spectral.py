"""The spectral stage: periodogram / Lomb-Scargle of a series and a band test against the noise.

Test: the periodogram ordinate I_k of noise divided by the mean noise spectrum at k is ~Exp(1)
for white and smooth coloured noise. The background is a running median of the periodogram over
neighbouring frequencies divided by ln 2 (the median of Exp(1)), so a peak cannot raise its own
background; the window widens with the run because jittered periods spread over more bins. The
statistic is the sum of ratios over a band of 2h+1 bins (h ~ 2% of the cycle count, capped). Its
null is not Gamma(2h+1): the background is an estimate and drifting noise variance correlates the
ordinates (bandnull); p-values are Bonferroni-corrected over every candidate band and both windows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from logdoctor.detectors import bandnull, robust
from logdoctor.detectors.robust import FloatArray

#: Irregularly spaced runs up to this many rows use Lomb-Scargle (O(n^2)); longer ones, and runs
#: whose spacing is regular but for a few gaps, are interpolated onto the median spacing.
LOMB_SCARGLE_MAX = 2000
#: The noise background is a running median over at least this fraction of the frequency bins.
BG_FRACTION = 0.005
#: Fraction of gaps that must equal the median spacing for a run to count as nearly even.
NEARLY_EVEN = 0.98
#: Bands per reported peak whose p-value is computed in full (bandnull), ranked by the Gamma(2h+1)
#: tail's z first: for bands of equal width and background both rank alike.
REFINED = 4
#: Background windows, in multiples of ``bg_window``: the narrow one follows coloured noise, the wide
#: one is a steadier estimate (a median of fewer bins has a heavier tail); each band takes the better
#: p-value of the two, Bonferroni-corrected over both.
BG_SCALES = (1, 2)


@dataclass(frozen=True, slots=True)
class Spectrum:
    """A one-sided spectrum of the detrended series and the grid it was computed on.

    Attributes:
        freq: frequencies in cycles per step (ascending, excluding 0).
        power: power at each frequency.
        grid: the evenly spaced series used for autocorrelation (interpolated when uneven).
        dt: steps between grid points. method: "periodogram", "lomb-scargle" or "interpolated".
    """

    freq: FloatArray
    power: FloatArray
    grid: FloatArray
    dt: float
    method: str


def even_spacing(d: FloatArray) -> bool:
    """True when every step difference is the same."""
    return bool(d.size) and bool(np.all(d == d[0]))


@dataclass(frozen=True, slots=True)
class PeakTest:
    """The strongest band of the spectrum and its significance."""

    index: int
    period: float
    p_value: float
    power_ratio: float
    statistic: float


#: The interpolation grid holds at most this many points per logged value: a corrupt step number
#: (step 200000000 in a 300-step log) must not make it hundreds of millions of points long.
MAX_GRID_PER_POINT = 8


def _grid_dt(steps: FloatArray, dt: float) -> float:
    """The median step spacing, widened when the grid would exceed MAX_GRID_PER_POINT per value."""
    span = float(steps[-1] - steps[0]) if steps.size else 0.0
    return max(dt, span / max(1, MAX_GRID_PER_POINT * steps.size))


def spectrum(steps: FloatArray, y: FloatArray) -> Spectrum:
    """Periodogram on evenly spaced steps; else Lomb-Scargle (short) or interpolation (long)."""
    d = np.diff(steps)
    dt = float(np.median(d)) if d.size else 1.0
    if not even_spacing(d):
        dt = _grid_dt(steps, dt)
    if even_spacing(d):
        grid, method = y - y.mean(), "periodogram"
    elif y.size <= LOMB_SCARGLE_MAX and np.mean(d == dt) < NEARLY_EVEN:
        span = float(steps[-1] - steps[0])
        freq = np.arange(1, y.size // 2 + 1) / span
        from scipy import signal  # heavy: loaded only for short uneven runs

        power = signal.lombscargle(steps - steps[0], y - y.mean(), 2 * np.pi * freq)
        regular = np.arange(steps[0], steps[-1] + dt / 2, dt)
        return Spectrum(
            freq,
            np.asarray(power, dtype=np.float64),
            np.interp(regular, steps, y),
            dt,
            "lomb-scargle",
        )
    else:
        regular = np.arange(steps[0], steps[-1] + dt / 2, dt)
        grid = np.interp(regular, steps, y)
        grid, method = grid - grid.mean(), "interpolated"
    f, p = periodogram(grid, dt)
    return Spectrum(f[1:], p[1:], grid, dt, method)


def periodogram(x: FloatArray, dt: float) -> tuple[FloatArray, FloatArray]:
    """One-sided power spectrum of ``x`` sampled every ``dt`` steps: scipy.signal.periodogram's
    (boxcar window, no detrend, scaling="spectrum") in plain numpy, which spares the CLI the import
    of scipy.signal (~0.3-0.7 s here) on every evenly spaced run."""
    n = x.size
    p = np.abs(np.fft.rfft(x)) ** 2 / float(n) ** 2
    p[1 : n // 2 + 1 if n % 2 else n // 2] *= 2.0  # fold negative frequencies (not DC, not Nyquist)
    return np.fft.rfftfreq(n, d=dt).astype(np.float64), p


def peak_tests(
    sp: Spectrum,
    span: float,
    *,
    band_frac: float = 0.02,
    bg_window: int = 31,
    min_cycles: float = 3.0,
    min_period_steps: float = 4.0,
    min_power_ratio: float = 0.0,
    top: int = 5,
) -> list[PeakTest]:
    """The ``top`` most significant distinct bands against the local background, best first.

    Only bands holding at least ``min_power_ratio`` of the total power compete (a razor-thin line
    can be "significant" yet irrelevant); p-values are Bonferroni-corrected over every candidate
    band and both background windows (BG_SCALES), so picking among the top few afterwards keeps
    them valid. Each band's tail comes from bandnull (the background is an estimate; drifting noise
    variance correlates the ordinates), for the REFINED x ``top`` bands ranked first per window.
    """
    # Jittered periods spread over more bins the longer the run: widen the background with it.
    bg_window = max(bg_window, int(BG_FRACTION * sp.freq.size) | 1)
    k = np.arange(sp.freq.size)
    cycles = sp.freq * span
    h = np.clip(np.round(band_frac * cycles), 1, max(1, bg_window // 8)).astype(np.int64)
    lo, hi = np.clip(k - h, 0, k.size), np.clip(k + h + 1, 0, k.size)
    cand = (sp.freq[lo] * span >= min_cycles) & (1.0 / sp.freq >= max(min_period_steps, 2 * sp.dt))
    n_tests = int(cand.sum()) * len(BG_SCALES)
    pc = np.concatenate(([0.0], np.cumsum(sp.power)))
    share = (pc[hi] - pc[lo]) / pc[-1] if pc[-1] > 0 else np.zeros(k.size)
    cand &= share >= min_power_ratio
    rho = bandnull.ordinate_correlation(sp.grid, max(BG_SCALES[-1] * bg_window + 1, int((hi - lo).max(initial=1))))
    stat, logp = _band_tests(sp, lo, hi, cand, bg_window, REFINED * top, rho)
    for scale in BG_SCALES[1:]:
        stat_s, logp_s = _band_tests(sp, lo, hi, cand, scale * bg_window, REFINED * top, rho)
        stat, logp = np.where(logp_s < logp, stat_s, stat), np.minimum(logp, logp_s)
    out: list[PeakTest] = []
    for i in np.argsort(logp, kind="stable")[: 50 * top]:
        if np.isposinf(logp[i]) or len(out) >= top:
            break
        if any(abs(int(i) - q.index) <= 2 * int(h[i]) + 1 for q in out):
            continue
        w = sp.power[lo[i] : hi[i]]
        f_c = float(np.sum(sp.freq[lo[i] : hi[i]] * w) / np.sum(w)) if np.sum(w) > 0 else float(sp.freq[i])
        p = float(min(1.0, np.exp(logp[i]) * n_tests))
        out.append(PeakTest(int(i), 1.0 / f_c, p, float(share[i]), float(stat[i])))
    return out


def _band_tests(
    sp: Spectrum,
    lo: NDArray[np.int64],
    hi: NDArray[np.int64],
    cand: NDArray[np.bool_],
    window: int,
    refine: int,
    rho: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """Each band's statistic against a running-median background of ``window`` bins, and its log tail
    (bandnull) for the ``refine`` candidate bands that rank first by the Gamma(2h+1) tail's
    Wilson-Hilferty z (+inf elsewhere); ``rho``: bandnull.ordinate_correlation of the series."""
    bg = robust.rolling_median(sp.power, window | 1, mode="mirror") / np.log(2.0)
    c = np.concatenate(([0.0], np.cumsum(sp.power / np.where(bg > 0, bg, np.inf))))
    stat, b = c[hi] - c[lo], hi - lo
    z = np.full(stat.size, -np.inf)
    z[cand] = bandnull.gamma_z(stat[cand], b[cand].astype(np.float64))
    best = np.argsort(-z, kind="stable")[:refine] if z.size <= 4 * refine else np.argpartition(-z, refine)[:refine]
    best = best[z[best] > -np.inf]
    logp = np.full(stat.size, np.inf)
    if best.size:
        size, w = sp.power.size, min(window | 1, sp.power.size)
        distinct = np.minimum(w, np.minimum(best, size - 1 - best) + w // 2 + 1)  # the mirrored ends repeat bins
        n_eff = np.array([bandnull.effective_bins(rho, int(d)) for d in distinct])
        var = np.array([bandnull.band_variance(rho, int(v)) for v in b[best]])
        logp[best] = bandnull.band_logsf(stat[best], b[best].astype(np.float64), var, n_eff)
    return stat, logp


def acf_at(grid: FloatArray, lag: int) -> float:
    """Autocorrelation of an evenly spaced series at one lag (0 when undefined)."""
    if lag < 1 or lag >= grid.size - 2:
        return 0.0
    a, b = grid[:-lag], grid[lag:]
    if a.std() == 0 or b.std() == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def downsample(
    period: FloatArray, power: FloatArray, max_points: int = 2000
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Keep at most ``max_points`` (period, power) pairs for plots: the max of each group."""
    if period.size <= max_points:
        return tuple(map(float, period)), tuple(map(float, power))
    size = -(-period.size // max_points)
    full = (period.size // size) * size
    idx = np.argmax(power[:full].reshape(-1, size), axis=1) + np.arange(0, full, size)
    return tuple(map(float, period[idx])), tuple(map(float, power[idx]))
