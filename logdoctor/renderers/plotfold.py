"""The loss folded by its detected period: the sawtooth of a periodic loss seen at a glance (display only)."""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from logdoctor.model import Report

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: Findings that carry the period a loss repeats with.
PERIODIC_CODES = ("LD202", "LD201")


def _steps(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 2 else None


def found_period(report: Report) -> float | None:
    """The period (steps) the loss repeats with: a periodic-loss finding's, else the megabatch period
    of a length-grouped verdict; None when nothing found the loss periodic."""
    for code in PERIODIC_CODES:
        for f in report.findings:
            if f.code == code and (p := _steps(f.evidence.get("period"))) is not None:
                return p
    v = report.verdict
    return _steps(v.evidence.get("megabatch_period")) if v.batching == "grouped" else None


def draw_fold(ax: Axes, steps: np.ndarray, loss: np.ndarray, period: float) -> None:
    """Each row's loss minus its running mean over one period, against its phase within the period,
    with the median per phase bin: the shape the loss repeats (display only, no statistic)."""
    ok = np.isfinite(loss)
    s, y = steps[ok].astype(float), loss[ok]
    if s.size < 4:
        return
    gap = float(np.median(np.diff(s))) if s.size > 1 else 1.0
    k = max(3, round(period / max(gap, 1e-9)) | 1)
    pad = np.pad(y, k // 2, mode="edge")
    trend = np.convolve(pad, np.ones(k) / k, mode="valid")[: y.size]
    phase = np.mod(s - s[0], period)
    ax.scatter(phase, y - trend, s=4, alpha=0.35, color="tab:blue", linewidths=0)
    bins = np.linspace(0, period, 25)
    mid, med = [], []
    for a, b in pairwise(bins):
        sel = (phase >= a) & (phase < b)
        if sel.sum() >= 3:
            mid.append((a + b) / 2)
            med.append(float(np.median((y - trend)[sel])))
    ax.plot(mid, med, color="tab:red", lw=2, label="median by phase")
    ax.axhline(0, color="0.6", lw=0.8)
    ax.set_xlabel(f"step within the period of {period:.4g} steps")
    ax.set_ylabel("loss minus its running mean")
    ax.set_title(f"the loss folded by its period ({period:.4g} steps)")
    ax.legend(loc="upper left", fontsize=8)


def eval_metrics(report: Report, drawn: str | None) -> list[str]:
    """The eval columns not drawn with the loss (accuracy, BLEU, WER, ...), at most three."""
    from logdoctor.detectors.evalnoise import metric_columns

    ev = report.run.evals
    if ev.height == 0 or "step" not in ev.columns:
        return []
    names = [c for c in metric_columns(ev) if c != drawn and ev[c].drop_nulls().len() > 0]
    return names[:3]


def draw_evals(ax: Axes, report: Report, names: list[str]) -> None:
    """The eval metrics over steps, each as logged (its own values; nothing computed)."""
    ev = report.run.evals
    for name in names:
        rows = ev.select("step", name).drop_nulls()
        vals = rows[name].cast(float).to_numpy()
        ax.plot(rows["step"].to_numpy(), vals, "o-" if vals.size <= 60 else "-", ms=3, lw=1.1, label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("value as logged")
    ax.set_title("eval metrics")
    ax.legend(loc="best", fontsize=8)
