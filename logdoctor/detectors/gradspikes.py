"""Gradient-norm spikes with no loss spike next to them (LD104), for the spike detector."""

from __future__ import annotations

import numpy as np

from logdoctor import codes
from logdoctor.detectors import robust
from logdoctor.detectors.robust import IntArray, Series
from logdoctor.detectors.spikefind import find_spikes
from logdoctor.model import GRAD_NORM, Finding, Run


def grad_spikes_alone(
    run: Run,
    loss: Series,
    loss_peaks: IntArray,
    *,
    z_threshold: float,
    min_ratio: float,
    window: int,
    scale_window: int,
    tolerance: int,
) -> list[Finding]:
    """LD104: grad-norm spikes (robust z >= ``z_threshold`` and >= ``min_ratio`` x the local median)
    with no loss spike within ``tolerance`` rows; one summary finding, or none.

    A huge gradient that leaves the loss untouched is often hidden by clipping; it is worth a look
    (info), not an alarm.
    """
    g = robust.series(run, GRAD_NORM)
    if g.n < 8:
        return []
    gs = find_spikes(g, z_threshold=z_threshold, min_ratio=min_ratio, window=window, scale_window=scale_window)
    if gs.peak.size == 0:
        return []
    steps = g.steps[gs.peak]
    rows = np.searchsorted(loss.steps, steps)
    peaks = np.sort(loss_peaks)
    near = np.zeros(steps.size, dtype=bool)
    if peaks.size:
        k = np.clip(np.searchsorted(peaks, rows), 1, peaks.size) - 1
        for off in (0, 1):
            near |= np.abs(peaks[np.clip(k + off, 0, peaks.size - 1)] - rows) <= tolerance
    keep = ~near
    if not keep.any():
        return []
    top = int(np.argmax(np.where(keep, gs.ratio, -np.inf)))
    ev = {
        "n_grad_spikes": int(keep.sum()),
        "max_ratio": round(float(gs.ratio[top]), 2),
        "max_robust_z": round(float(gs.z[top]), 2),
        "max_step": int(steps[top]),
        "max_value": float(gs.value[top]),
        "local_median": float(gs.level[top]),
        "first_step": int(steps[keep][0]),
    }
    return [
        codes.finding(
            "LD104",
            f"The gradient norm spiked {int(keep.sum())} time(s) without a loss spike; largest "
            f"{gs.value[top]:.4g} at step {steps[top]} ({gs.ratio[top]:.0f}x its local median).",
            confidence=float(min(0.99, 0.5 + 0.5 * max(0.0, 1.0 - z_threshold / max(float(gs.z[top]), 1e-9)))),
            first_step=int(steps[keep][0]),
            last_step=int(steps[keep][-1]),
            line=int(g.lines[gs.peak[top]]) or None,
            evidence=ev,
        )
    ]
