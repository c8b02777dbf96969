"""What else explains a bad-looking loss: NaN, divergence, resume, instability, bad batches, lr.

Each check uses the detectors' findings when present (LD001, LD002, LD003/LD004, LD102, LD101) and
otherwise computes the minimum it needs itself, so the verdict never rests on batching by default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from logdoctor.detectors import robust
from logdoctor.model import Evidence, Finding

#: Which cause is named first when several are present: mechanisms that explain the symptoms
#: (a running average, a cyclic lr, a staircase) come before the symptoms detectors report.
PRIORITY = {
    "nan": 0,
    "resume": 1,
    "running_avg": 2,
    "cyclic_lr": 3,
    "staircase": 4,
    "instability": 5,
    "divergence": 6,
    "bad_batches": 7,
}


@dataclass(frozen=True, slots=True)
class Cause:
    """A non-batching explanation, strongest first when sorted by ``priority``."""

    key: str
    label: str
    priority: int
    strength: float
    evidence: Evidence = field(default_factory=dict)


def _rolling_median_pl(f: np.ndarray, window: int, *, center: bool) -> np.ndarray:
    """Rolling median (polars); edges use the available points."""
    out = pl.Series(f).rolling_median(window_size=window, min_samples=1, center=center)
    return out.to_numpy().astype(float)


def _rolling_median(f: np.ndarray, window: int, *, center: bool) -> np.ndarray:
    """Rolling median of finite values; edges use the available points. Same values as polars'
    ``rolling_median(min_samples=1)``, but full windows (odd sizes) go through scipy's
    median_filter, ~5x faster at 1M points; only the few edge points are left to polars."""
    h, n = window // 2, f.size
    if window % 2 == 0 or n < 3 * window:
        return _rolling_median_pl(f, window, center=center)
    mid = robust.rolling_median(f, window, mode="nearest")  # = scipy.ndimage.median_filter
    if center:  # mid[i] is exact where the whole window fits: h <= i < n - h
        mid[:h] = _rolling_median_pl(f[: 2 * window], window, center=True)[:h]
        mid[n - h :] = _rolling_median_pl(f[-2 * window :], window, center=True)[-h:]
        return mid
    out = np.empty(n)  # trailing window ending at i is the centred one at i - h
    out[window - 1 :] = mid[h : n - h]
    out[: window - 1] = _rolling_median_pl(f[: window - 1], window, center=False)
    return out


def _mad_scale(dev: np.ndarray) -> float:
    return float(np.median(np.abs(dev - np.median(dev)))) * 1.4826 or 1e-12


def _robust_z(v: np.ndarray, window: int = 15) -> np.ndarray:
    """Deviation from a centred rolling median over a global MAD scale (NaN-safe)."""
    ok = np.isfinite(v)
    z = np.zeros(v.shape)
    if ok.sum() < window:
        return z
    f = v[ok]
    dev = f - _rolling_median(f, window, center=True)
    z[ok] = dev / _mad_scale(dev)
    return z


def _peak_z(
    v: np.ndarray, side: int = 7, min_ratio: float = 1.0, min_rise: float = 0.0
) -> np.ndarray:
    """How far each point rises above BOTH the median of the ``side`` points before it and of those
    after it, over a global MAD scale: high for a spike, low for a step or a steep smooth ramp.
    Points less than ``min_ratio`` times that local level (for a positive series), or less than
    ``min_rise`` above it, score 0.
    """
    ok = np.isfinite(v)
    z = np.zeros(v.shape)
    if ok.sum() < 4 * side:
        return z
    f = v[ok]
    left = np.r_[f[0], _rolling_median(f, side, center=False)[:-1]]
    right = _rolling_median(f[::-1], side, center=False)[::-1]
    right = np.r_[right[1:], f[-1]]
    level = np.maximum(left, right)
    base = f - _rolling_median(f, 2 * side + 1, center=True)
    big = ((level <= 0) | (f >= min_ratio * level)) & (f - level >= min_rise)
    z[ok] = np.where(big, (f - level) / _mad_scale(base), 0.0)
    return z


def _level(v: np.ndarray, side: int = 7) -> np.ndarray:
    """Median of the ``side`` finite values before each point (its level before any jump)."""
    ok = np.isfinite(v)
    out = np.full(v.shape, np.nan)
    if ok.any():
        f = v[ok]
        out[ok] = np.r_[f[0], _rolling_median(f, side, center=False)[:-1]]
    return out


def from_findings(findings: Sequence[Finding]) -> list[Cause]:
    """Causes named by other detectors' findings."""
    table = {
        "LD001": ("nan", "non-finite loss (NaN/inf)", PRIORITY["nan"]),
        "LD002": ("divergence", "divergence", PRIORITY["divergence"]),
        "LD003": ("resume", "a resume that rewrote earlier steps", PRIORITY["resume"]),
        "LD004": ("resume", "a resume followed by a loss jump", PRIORITY["resume"]),
        "LD102": (
            "instability",
            "optimisation instability (grad-norm spikes)",
            PRIORITY["instability"],
        ),
    }
    out = []
    for f in findings:
        if f.code in table:
            key, label, prio = table[f.code]
            out.append(Cause(key, label, prio, f.confidence, {"from_finding": f.code}))
    return out


def nonfinite(steps: np.ndarray, loss: np.ndarray) -> Cause | None:
    """Any NaN/inf loss."""
    bad = ~np.isfinite(loss)
    if not bad.any():
        return None
    return Cause(
        "nan",
        "non-finite loss (NaN/inf)",
        PRIORITY["nan"],
        1.0,
        {"nonfinite_steps": int(bad.sum()), "first_nonfinite_step": int(steps[bad][0])},
    )


def resumed(resumes: int, resume_steps: Sequence[int]) -> Cause | None:
    """The run restarted from an earlier step (ingest counted it)."""
    if resumes <= 0:
        return None
    first = int(resume_steps[0]) if resume_steps else None
    return Cause(
        "resume",
        "a resume that rewrote earlier steps",
        PRIORITY["resume"],
        0.95,
        {"resumes": resumes, "first_resume_step": first},
    )


def spikes(
    steps: np.ndarray,
    loss: np.ndarray,
    resid: np.ndarray,
    grad_norm: np.ndarray | None,
    z_min: float = 8.0,
) -> Cause | None:
    """Isolated loss spikes (length effect removed; at least 1.5x the local level), or grad-norm
    spikes (at least 5x) that the loss jumps with (≥1.2x): instability, whose bumps decay over
    several steps and so need not look isolated.
    """
    z = _peak_z(resid) * (_peak_z(loss, min_ratio=1.5) > 0)
    hit = np.flatnonzero(z > z_min)
    if hit.size > max(3, 0.02 * resid.size):
        return None
    gn_hits = np.array([], dtype=int)
    if grad_norm is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            gz = _peak_z(np.log(grad_norm), min_rise=float(np.log(5.0)))
        cand = np.flatnonzero(gz > 8)[:50]
        if cand.size:
            rise = _robust_z(resid) * (_robust_z(loss) > 0) * (loss >= 1.2 * _level(loss))
            near = [rise[max(0, i - 2) : i + 3].max() for i in cand]
            gn_hits = cand[np.asarray(near) > 5]
    if hit.size == 0 and gn_hits.size == 0:
        return None
    first = int(steps[min(np.r_[hit, gn_hits])])
    ev: dict[str, float | int | str | bool | None] = {
        "loss_spikes": int(hit.size),
        "max_spike_z": round(float(z[hit].max()), 1) if hit.size else None,
        "grad_norm_spikes_with_loss": int(gn_hits.size),
        "first_spike_step": first,
    }
    if gn_hits.size and gn_hits.size <= max(3, 0.02 * resid.size):
        return Cause(
            "instability",
            "optimisation instability (loss spikes with grad-norm spikes)",
            PRIORITY["instability"],
            float(min(1.0, 0.5 + 0.1 * gn_hits.size)),
            ev,
        )
    if hit.size == 0:
        return None
    return Cause(
        "bad_batches",
        "isolated bad batches (loss spikes)",
        PRIORITY["bad_batches"],
        float(min(1.0, z[hit].max() / 20)),
        ev,
    )


def cyclic_lr(lr: np.ndarray | None, resid: np.ndarray) -> Cause | None:
    """An lr that rises again after decaying (restarts / triangular) and that the loss follows."""
    if lr is None:
        return None
    ok = np.isfinite(lr) & np.isfinite(resid)
    v = lr[ok]
    rerise = _rerise(v)
    if rerise < 0.2:
        return None
    if np.ptp(resid[ok]) == 0:
        return None
    rho, p = robust.spearman(resid[ok], v)
    if not (rho > 0.1 and p < 1e-4):
        return None
    return Cause(
        "cyclic_lr",
        "a cyclic / restarting learning rate that the loss follows",
        PRIORITY["cyclic_lr"],
        min(1.0, rho * 2),
        {"lr_rerise": round(rerise, 3), "loss_lr_rho": round(rho, 3), "loss_lr_p": p},
    )


def _rerise(v: np.ndarray) -> float:
    """How far the lr climbs again after its first peak, as a share of its range."""
    if v.size < 20 or np.ptp(v) <= 0:
        return 0.0
    warmup = v.max() - v[0] >= 0.2 * np.ptp(v)
    peak = int(np.argmax(v >= v[0] + 0.9 * (v.max() - v[0]))) if warmup else 0
    after = v[peak:]
    return float(np.max(after - np.minimum.accumulate(after)) / np.ptp(v)) if after.size else 0.0


def is_cyclic(lr: np.ndarray | None) -> bool:
    """True when the lr rises again by ≥20% of its range after its first peak."""
    return lr is not None and _rerise(lr[np.isfinite(lr)]) >= 0.2
