"""A significant period in the detrended loss (LD201), tested against a noise background.

The loss is detrended (log values minus a long rolling median, or with ``trend_dof`` a robust spline
in log-steps: logtrend.py), its spectrum is computed by
``spectral`` (periodogram, or Lomb-Scargle for unevenly spaced steps) and the strongest bands are
tested there. A period is reported only when p < alpha, the band holds a visible share of the
power, and the autocorrelation backs it: positive at the period and clearly above that at half
the period (true cycles anti-correlate at half a period; red-noise and random-walk residuals decay
monotonically, which rejects their low-frequency bumps).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors import logtrend, robust
from logdoctor.detectors.base import TOO_FEW_ROWS, Analyzer, Detection
from logdoctor.detectors.robust import FloatArray, Series
from logdoctor.detectors.spectral import PeakTest, acf_at, downsample, peak_tests, spectrum
from logdoctor.model import LOSS, Finding, Run, Severity
from logdoctor.options import Option, fraction, int_opt, positive

#: Fewer rows than this: no spectral analysis (reported once by the too-short analyzer).
MIN_POINTS = 48


def detrend(s: Series, window_frac: float = 1.0, dof: int = 0) -> FloatArray:
    """Remove the slow fall of the loss: log values minus a rolling median of ``window_frac`` of the
    run (robust.trend); with ``dof`` > 0, minus a natural cubic spline of ``dof`` degrees of freedom
    with knots equally spaced in log-steps, fitted robustly (logtrend.trend), which keeps a sawtooth
    of 4-10 epochs that the median follows on a steep fall (bench/RESULTS.md, r9-lowfreq)."""
    y = s.transformed()
    if dof > 0:
        return y - logtrend.trend(s.steps.astype(np.float64), y, dof)
    return y - robust.trend(y, max(3, int(window_frac * s.n)))


def epoch_relation(period: float, steps_per_epoch: int, tol: float = 0.05) -> str:
    """Say how a period relates to the epoch: equal, a simple fraction or multiple, or neither."""
    r = period / steps_per_epoch
    if abs(r - 1) <= tol:
        return f"about the epoch length ({steps_per_epoch} steps)"
    if r > 1 and abs(r - round(r)) <= tol * r:
        return f"about {round(r)} epochs of {steps_per_epoch} steps"
    if r < 1 and abs(1 / r - round(1 / r)) <= tol / r and round(1 / r) <= 20:
        return f"about 1/{round(1 / r)} of the epoch of {steps_per_epoch} steps"
    return f"unrelated to the epoch of {steps_per_epoch} steps (ratio {r:.3g})"


def folded_amplitude(s: Series, resid: FloatArray, period: float) -> tuple[float, float]:
    """Peak-to-peak amplitude of the phase-folded mean of ``resid`` over ``period``, and the per-row
    noise (MAD sigma of ``resid``); both relative to the loss (log units when the loss is positive)."""
    dt = float(np.median(np.diff(s.steps))) if s.n > 1 else 1.0
    bins = int(max(4, min(16, round(period / max(dt, 1e-9)))))
    phase = ((s.steps - s.steps[0]) / period) % 1.0
    idx = np.minimum((phase * bins).astype(int), bins - 1)
    counts = np.bincount(idx, minlength=bins)
    prof = np.bincount(idx, resid, bins)[counts > 0] / counts[counts > 0]
    noise = 1.4826 * float(np.median(np.abs(resid - np.median(resid))))
    scale = 1.0 if s.log_scale else max(float(np.median(np.abs(s.values))), 1e-12)
    return float(np.ptp(prof)) / scale, noise / scale


class PeriodicityDetector(Analyzer):
    """Dominant period of the detrended loss, tested for significance, related to the epoch."""

    name = "periodicity"
    #: every keyword of ``__init__`` with its type and bounds (checked where configured)
    options: ClassVar[tuple[Option, ...]] = (
        fraction("alpha", high_open=True),
        fraction("band_frac"),
        int_opt("bg_window", 3),
        positive("min_cycles"),
        Option("min_acf", float, 0, 1),
        Option("min_power_ratio", float, 0, 1),
        Option("min_acf_contrast", float, 0, 1),
        positive("trend_frac"),
        int_opt("trend_dof", 0),
        fraction("max_info_amplitude"),
    )

    def __init__(
        self,
        *,
        alpha: float = 0.001,
        band_frac: float = 0.02,
        bg_window: int = 31,
        min_cycles: float = 3.0,
        min_acf: float = 0.05,
        min_power_ratio: float = 0.02,
        min_acf_contrast: float = 0.05,
        trend_frac: float = 1.0,
        trend_dof: int = 0,
        max_info_amplitude: float = 0.05,
    ) -> None:
        #: a period unrelated to the epoch whose peak-to-peak amplitude is below the per-step noise
        #: and below this share of the loss is information, not a warning (docs/detectors.md)
        self.max_info_amplitude = max_info_amplitude
        self.alpha = alpha
        self.band_frac = band_frac
        self.bg_window = bg_window
        self.min_cycles = min_cycles
        self.min_acf = min_acf
        self.min_power_ratio = min_power_ratio
        self.min_acf_contrast = min_acf_contrast
        self.trend_frac = trend_frac
        #: 0: the rolling-median detrend; else the degrees of freedom of logtrend's spline (8: a
        #: sawtooth of >= 4 epochs survives it; not the default yet: bench/RESULTS.md, r9-lowfreq)
        self.trend_dof = trend_dof

    def analyze(self, run: Run) -> Detection:
        """Spectrum of the detrended loss; LD201 for the first significant band that also shows
        in the autocorrelation (positive at the period, clearly above that at half the period)."""
        s = robust.series(run, LOSS)
        if s.n < MIN_POINTS:
            return Detection(skipped=TOO_FEW_ROWS)
        steps = s.steps.astype(np.float64)
        resid = detrend(s, self.trend_frac, self.trend_dof)
        sp = spectrum(steps, resid)
        span = float(steps[-1] - steps[0] + sp.dt)
        per, pw = downsample(1.0 / sp.freq[::-1], sp.power[::-1])
        arts: dict[str, object] = {"periodogram_period": per, "periodogram_power": pw}
        peaks = peak_tests(
            sp,
            span,
            band_frac=self.band_frac,
            bg_window=self.bg_window,
            min_cycles=self.min_cycles,
            min_power_ratio=self.min_power_ratio,
        )
        for pk in peaks:
            if pk.p_value >= self.alpha:
                break
            lag = round(pk.period / sp.dt)
            acf, acf_half = acf_at(sp.grid, lag), acf_at(sp.grid, max(1, lag // 2))
            if acf >= self.min_acf and acf - acf_half >= self.min_acf_contrast:
                arts["period"] = float(pk.period)
                found = self._finding(run, s, pk, span, acf, acf_half, sp.method)
                return Detection((self._severity(found, s, resid, pk.period),), arts)
        return Detection(artifacts=arts)

    def _severity(self, f: Finding, s: Series, resid: FloatArray, period: float) -> Finding:
        """Information when the cycle is smaller than one step's noise (of ``resid``, the detrended loss
        the spectrum was taken of) and unrelated to the epoch."""
        amp, noise = folded_amplitude(s, resid, period)
        ev = {**f.evidence, "amplitude_rel": round(amp, 5), "noise_rel": round(noise, 5)}
        ratio = f.evidence.get("epoch_ratio")
        spe = f.evidence.get("steps_per_epoch")
        tied = isinstance(ratio, float) and isinstance(spe, int)
        tied = tied and not epoch_relation(period, int(spe or 1)).startswith("unrelated")
        if amp < noise and amp < self.max_info_amplitude and not tied:
            msg = (
                f"{f.message[:-1]}; its amplitude ({amp:.1%} peak to peak) is below the noise of one step "
                f"({noise:.1%}) and it matches no epoch: information, not a fault."
            )
            return dataclasses.replace(f, severity=Severity.INFO, message=msg, evidence=ev)
        return dataclasses.replace(f, evidence=ev)

    def _finding(
        self,
        run: Run,
        s: Series,
        pk: PeakTest,
        span: float,
        acf: float,
        acf_half: float,
        method: str,
    ) -> Finding:
        spe = run.meta.steps_per_epoch
        ev = {
            "period": round(pk.period, 3),
            "p_value": pk.p_value,
            "power_ratio": round(pk.power_ratio, 5),
            "acf_at_period": round(acf, 4),
            "acf_at_half_period": round(acf_half, 4),
            "n_cycles": round(span / pk.period, 2),
            "epoch_ratio": round(pk.period / spe, 4) if spe else None,
            "steps_per_epoch": spe,
            "band_statistic": round(pk.statistic, 3),
            "method": method,
            "alpha": self.alpha,
        }
        epoch_txt = f"; {epoch_relation(pk.period, spe)}" if spe else ""
        conf = min(0.99, max(0.5, 1.0 - 0.5 * pk.p_value / self.alpha) * min(1.0, 0.5 + acf))
        return codes.finding(
            "LD201",
            # plain words first; the test's p-value and autocorrelation are evidence (-v, JSON)
            f"The detrended loss repeats every ~{pk.period:.1f} steps ({100 * pk.power_ratio:.1f}% "
            f"of its variation{epoch_txt}).",
            confidence=float(conf),
            first_step=int(s.steps[0]),
            last_step=int(s.steps[-1]),
            evidence=ev,
        )
