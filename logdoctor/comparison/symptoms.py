"""The symptom in both runs: power at the baseline's period and at the epoch, spike rate, loss~length."""

from __future__ import annotations

import numpy as np

from logdoctor.comparison.result import Symptom
from logdoctor.comparison.series import RunSeries
from logdoctor.detectors import robust
from logdoctor.detectors.periodicity import MIN_POINTS, detrend
from logdoctor.detectors.spectral import BG_FRACTION, spectrum
from logdoctor.diagnosis import lengthstats
from logdoctor.model import LOSS, Report
from logdoctor.stats.rolling import rolling_median

#: A period is measured only when the run holds this many cycles of it (as the detector requires).
MIN_CYCLES = 3.0


def power_at(report: Report, period: float, *, band_frac: float = 0.02, bg_window: int = 31) -> float | None:
    """Mean power of the detrended loss over a narrow band at ``period``, in units of the local noise
    background (≈1 for noise, ≫1 for a real cycle); the background as in the periodicity detector."""
    s = robust.series(report.run, LOSS)
    if s.n < MIN_POINTS or period <= 0:
        return None
    steps = s.steps.astype(np.float64)
    sp = spectrum(steps, detrend(s))
    span = float(steps[-1] - steps[0] + sp.dt)
    if span / period < MIN_CYCLES or period < 2 * sp.dt:
        return None
    window = max(bg_window, int(BG_FRACTION * sp.freq.size) | 1)
    bg = rolling_median(sp.power, window, mode="mirror") / np.log(2.0)
    ratio = sp.power / np.where(bg > 0, bg, np.inf)
    k = int(np.argmin(np.abs(sp.freq - 1.0 / period)))
    h = int(np.clip(round(band_frac * span / period), 1, max(1, window // 8)))
    return float(np.mean(ratio[max(0, k - h) : k + h + 1]))


def _period_symptoms(base: Report, cand: Report) -> list[Symptom]:
    out = []
    period = base.artifacts.period
    if period:
        out.append(
            Symptom(
                "periodic_power",
                f"power at {period:.4g} steps",
                "x",
                power_at(base, period),
                power_at(cand, period),
                period,
                period,
            )
        )
    spe_b, spe_c = base.meta.steps_per_epoch, cand.meta.steps_per_epoch
    if spe_b:
        spe_c = spe_c or spe_b
        out.append(
            Symptom(
                "epoch_power",
                "power at the epoch",
                "x",
                power_at(base, spe_b),
                power_at(cand, spe_c),
                float(spe_b),
                float(spe_c),
            )
        )
    return out


def spike_rate(report: Report) -> float | None:
    """Loss spikes per 1000 steps."""
    s = report.series
    if s.first_step is None or s.last_step is None:
        return None
    return 1000.0 * len(report.artifacts.spike_steps) / (s.last_step - s.first_step + 1)


def loss_length_rho(report: Report) -> float | None:
    """Spearman correlation of the detrended loss with batch length (as the batching diagnosis)."""
    x, _ = lengthstats.batch_length(report.run)
    if x is None:
        return None
    steps = lengthstats.step_array(report.run).astype(np.float64)
    loss = report.run.table[LOSS].cast(float).fill_null(float("nan")).to_numpy()
    ll = lengthstats.loss_length(lengthstats.detrend(steps, loss), x)
    return None if ll is None else ll.rho


def _median(x: np.ndarray | None) -> float | None:
    return None if x is None or x.size == 0 else float(np.median(x))


def symptoms(base: Report, cand: Report, sb: RunSeries, sc: RunSeries) -> list[Symptom]:
    """Every symptom and cost measured in both runs (those measurable in neither are left out)."""
    out = _period_symptoms(base, cand)
    out.append(Symptom("spike_rate", "spikes per 1k steps", "rate", spike_rate(base), spike_rate(cand)))
    out.append(Symptom("loss_length_rho", "loss~length ρ", "rho", loss_length_rho(base), loss_length_rho(cand)))
    out.append(Symptom("throughput", "median tokens/s", "tok/s", _median(sb.tok_s), _median(sc.tok_s)))
    out.append(Symptom("padding", "padding", "fraction", _median(sb.pad_frac), _median(sc.pad_frac)))
    return [s for s in out if s.baseline is not None or s.candidate is not None]
