"""Length-grouped megabatches: which sampler a window or a loss period matches, aliasing included.

HF ``group_by_length`` (``LengthGroupedSampler``) draws random megabatches of ``mega_batch_mult``
batches of ``per_device_batch × grad_accum`` samples, sorts each by length and recomposes them every
epoch: ``mega_batch_mult = min(50, samples // (4 × batch))``, so a megabatch is 50 optimizer steps
(fewer, a quarter epoch, on small datasets). The loss then oscillates with that period. A log written
every k steps (HF logs the mean over the k steps) sees a period of m steps at the alias frequency
``|k/m - round(k/m)|`` cycles per row, and nothing when k is a multiple of m.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from logdoctor.stats.distributions import f_sf

#: HF's default (and largest) megabatch, in optimizer steps.
HF_MEGABATCH = 50
#: Logging intervals tried when the log prints no step numbers (rows, not steps).
ROW_STRIDES = (1, 2, 5, 10, 25)
#: Relative tolerance on a period match: a megabatch is an exact number of steps, and LD201 estimates
#: a period to far better than 5% over the runs it can see (resolution ~P²/N steps); the real HF
#: group_by_length logs sit within 2.5%, a nanoGPT loss period of 46.6 steps (no megabatches) 6.7% off.
TOLERANCE = 0.05


#: Folded test: per-candidate p below this (≤ 10 candidates: family-wise ≤ 1e-3, LD201's alpha),
#: and the megabatch phase must explain at least this share of the detrended loss variance.
FOLD_P, FOLD_R2 = 1e-4, 0.05


@dataclass(frozen=True, slots=True)
class Match:
    """A period that matches a length-grouped sampler.

    Attributes:
        period: the observed period, in the log's step unit (steps, or rows when unnumbered).
        megabatch_steps: the sampler's megabatch, in optimizer steps.
        stride: optimizer steps per logged row (assumed when the log has no step numbers).
        aliased: the logged period is an alias of the megabatch period.
        sampler: what it matches, in words.
    """

    period: float
    megabatch_steps: int
    stride: int
    aliased: bool
    sampler: str
    #: "LD201" when the detector found the period, "folded" when the candidate was tested directly
    source: str = "LD201"
    p_value: float | None = None
    r2: float | None = None


def logged_period(m: float, k: float) -> float | None:
    """Period (in steps) at which a period of ``m`` steps appears in a loss averaged over every
    ``k`` steps; None when the averaging removes it (k a multiple of m)."""
    if k <= 1:
        return float(m)
    r = k / m
    alias = abs(r - round(r))
    return None if alias < 1e-6 else k / alias


def sampler_name(m: int) -> str:
    """The sampler a megabatch of ``m`` optimizer steps matches."""
    if m == HF_MEGABATCH:
        return f"HF LengthGroupedSampler / group_by_length (mega_batch_mult={HF_MEGABATCH})"
    return f"HF LengthGroupedSampler on a small dataset (mega_batch_mult={m}: a quarter epoch)"


def _candidates(steps_per_epoch: float | None) -> list[int]:
    out = [HF_MEGABATCH]
    if steps_per_epoch and 2 <= steps_per_epoch // 4 < HF_MEGABATCH:
        out.append(int(steps_per_epoch // 4))
    return out


def match_steps(period: float, stride: float, steps_per_epoch: float | None) -> Match | None:
    """Match a loss period in real steps, logged every ``stride`` steps."""
    k = max(1, round(stride))
    for m in _candidates(steps_per_epoch):
        e = logged_period(m, k)
        if e is not None and abs(period / e - 1) <= TOLERANCE:
            return Match(period, m, k, abs(e - m) > 1e-6, sampler_name(m))
    return None


def averaged_away(stride: float, steps_per_epoch: float | None) -> bool:
    """Logging every ``stride`` steps averages every candidate megabatch period away."""
    k = max(1, round(stride))
    return k > 1 and all(logged_period(m, k) is None for m in _candidates(steps_per_epoch))


def match_rows(period_rows: float, rows_per_epoch: float | None) -> Match | None:
    """Match a loss period in rows of a log with no step numbers: the HF megabatch of 50 steps
    logged every k steps for a common k dividing 50 (no alias: an aliased match would be
    ambiguous), with an epoch long enough (≥ 200 optimizer steps) for mega_batch_mult to be 50."""
    for k in ROW_STRIDES:
        e = HF_MEGABATCH / k
        long_epoch = rows_per_epoch is None or rows_per_epoch * k >= 4 * HF_MEGABATCH
        if e >= 2 and abs(period_rows / e - 1) <= TOLERANCE and long_epoch:
            return Match(period_rows, HF_MEGABATCH, k, False, sampler_name(HF_MEGABATCH))
    return None


def window_sampler(spacing: float, hf_steps: int | None = None) -> str:
    """What sorted windows of ``spacing`` logged batches match (from batch statistics): HF's
    megabatch for this run's sizes (``hf_steps``: a quarter epoch on a small dataset), else 50
    optimizer steps, i.e. 50·g per-device batches with g-step gradient accumulation."""
    if hf_steps and hf_steps != HF_MEGABATCH and abs(spacing / hf_steps - 1) <= TOLERANCE:
        return sampler_name(hf_steps)
    for g in (1, 2, 4, 8):
        if abs(spacing / (HF_MEGABATCH * g) - 1) <= TOLERANCE:
            acc = f", {g} accumulation steps" if g > 1 else ""
            return f"HF LengthGroupedSampler / group_by_length (mega_batch_mult={HF_MEGABATCH}{acc})"
    return "a sorted-megabatch sampler (group_by_length with another size, lhotse/ESPnet-style buckets)"


def folded(steps: np.ndarray, resid: np.ndarray, period: float, stride: float) -> tuple[float, float]:
    """(p, R²) of a one-way ANOVA of the detrended loss on its phase within ``period`` steps.

    A pre-specified period needs no search: under any stationary noise whose autocorrelation has
    died out at the period (white; AR(1) with φ^period ≈ 0), the phase-bin means are independent and
    the F statistic follows F(bins-1, n-bins). Slow drifts spread over every phase.
    """
    return _folded_on(_Folding(steps, resid), period, stride)


class _Folding:
    """The finite rows of the detrended loss, scaled once for every period tested on them: the
    median and range of a million rows are most of one test's cost, and they do not depend on it."""

    def __init__(self, steps: np.ndarray, resid: np.ndarray) -> None:
        ok = np.isfinite(resid)
        self._raw, self.t = resid[ok], steps[ok].astype(float)
        self._scaled: np.ndarray | None = None

    @property
    def size(self) -> int:
        return int(self._raw.size)

    @property
    def y(self) -> np.ndarray:
        """Scale-free (median 0, range 1): huge losses cannot overflow the sums of squares."""
        if self._scaled is None:
            y = self._raw
            self._scaled = (y - np.median(y)) / (np.ptp(y) or 1.0)
        return self._scaled


def _folded_on(rows: _Folding, period: float, stride: float) -> tuple[float, float]:
    t = rows.t
    bins = int(np.clip(round(period / max(stride, 1.0)), 2, 20))
    if rows.size < 10 * bins:
        return 1.0, 0.0
    b = np.minimum((((t - t[0]) % period) / period * bins).astype(int), bins - 1)
    count = np.bincount(b, minlength=bins).astype(float)
    if np.any(count < 3):
        return 1.0, 0.0
    y = rows.y
    mean = np.bincount(b, y, minlength=bins) / count
    ssb = float(np.sum(count * (mean - y.mean()) ** 2))
    ssw = float(np.sum((y - mean[b]) ** 2))
    f = (ssb / (bins - 1)) / max(ssw / (y.size - bins), 1e-300)
    return f_sf(f, bins - 1, y.size - bins), ssb / max(ssb + ssw, 1e-300)


def candidates_logged(stride: float, steps_per_epoch: float | None, rows_only: bool) -> list[tuple[int, int, float]]:
    """(megabatch steps, logging interval, logged period in the log's unit) to test directly."""
    if rows_only:
        return [(HF_MEGABATCH, k, HF_MEGABATCH / k) for k in ROW_STRIDES if HF_MEGABATCH / k >= 2]
    k = max(1, round(stride))
    out = []
    for m in _candidates(steps_per_epoch):
        e = logged_period(m, k)
        if e is not None and e / k >= 2:
            out.append((m, k, e))
    return out


def match_folded(
    steps: np.ndarray, resid: np.ndarray, stride: float, steps_per_epoch: float | None, rows_only: bool
) -> Match | None:
    """The strongest candidate megabatch period that passes the folded test, if any."""
    best: Match | None = None
    rows = _Folding(steps, resid)  # scaled once, for every candidate period
    for m, k, e in candidates_logged(stride, steps_per_epoch, rows_only):
        if steps_per_epoch and abs(e / steps_per_epoch - 1) <= 0.1:
            continue  # the epoch's own period is the sawtooth rule's
        p, r2 = _folded_on(rows, e, 1.0 if rows_only else stride)
        if p < FOLD_P and r2 >= FOLD_R2 and (best is None or (best.r2 or 0) < r2):
            aliased = not rows_only and abs(e - m) > 1e-6
            best = Match(e, m, k, aliased, sampler_name(m), "folded", p, r2)
    return best
