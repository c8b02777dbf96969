"""The loss panel of the figure: readable at a glance (log scale, clamped outliers, shaded findings)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from logdoctor import sanitize
from logdoctor.detectors.evalseries import main_eval_loss
from logdoctor.model import STEP, Report
from logdoctor.renderers.spans import finding_spans, run_wide
from logdoctor.stats.rolling import rolling_median

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: Findings whose step range is shaded on the loss panel: code -> (label, colour).
SHADED: dict[str, tuple[str, str]] = {
    "LD002": ("divergence", "tab:red"),
    "LD410": ("overfitting", "tab:orange"),
    "LD402": ("plateau", "tab:gray"),
    "LD403": ("loss rise", "tab:pink"),
}
#: Findings drawn as markers along the top edge (an isolated grad-norm spike has no loss height).
GRAD_SPIKES = ("LD102", "LD104")
#: More rows than this: the loss is drawn as a median line over its 10-90% band per display bucket.
DENSE_ROWS = 1500
DISPLAY_BUCKETS = 400
#: Draw epoch boundaries lightly above this many.
MANY_EPOCHS = 12
#: A loss whose 99th/1st percentile ratio exceeds this spans decades: log scale.
DECADES = 30.0
#: ... and whose first tenth sits this many times above its last tenth (it decays over decades).
TREND_RATIO = 5.0


@dataclass(frozen=True, slots=True)
class YRange:
    """The loss axis: limits, scale, and the points above the top that are drawn clamped."""

    low: float
    high: float
    log: bool
    clipped: np.ndarray


def _values(x: np.ndarray, log: bool) -> np.ndarray:
    x = x[np.isfinite(x)]
    return np.log10(x[x > 0]) if log else x


def _bulk_top(v: np.ndarray) -> float:
    """The top of the curve without stray points: a value counts only when its neighbourhood (median of
    5 rows) reaches it; a warm start or a sustained divergence sets the axis, one stray value does not."""
    if v.size < 10:
        return float(v.max())
    local = rolling_median(v, 5, mode="nearest")
    top, low = float(local.max()), float(local.min())
    spread = max(top - low, 1e-12)
    keep = v[v <= top + 0.5 * spread]  # the largest value that is not a stray point
    return float(keep.max()) if keep.size else top


def _falls(v: np.ndarray) -> float:
    """How far the loss falls over the run: median of its first tenth over that of its last tenth."""
    if v.size < 10 or np.any(v <= 0):
        return 1.0
    k = max(1, v.size // 10)
    return float(np.median(v[:k]) / np.median(v[-k:]))


def y_range(loss: np.ndarray, extra: np.ndarray | None = None) -> YRange | None:
    """Axis limits from the bulk of the loss and the ``extra`` values drawn with it (the eval loss);
    a few far outliers of the loss are clamped and labelled, not allowed to squash the curve."""
    both = loss if extra is None else np.r_[loss, extra]
    fin = both[np.isfinite(both)]
    if fin.size == 0:
        return None
    pos = fin[fin > 0]
    # decades: the curve's top (stray points aside) over its 1st percentile
    top = _bulk_top(loss[np.isfinite(loss)]) if np.isfinite(loss).sum() else float(fin.max())
    log = pos.size == fin.size and fin.size > 2 and top / float(np.percentile(pos, 1)) > DECADES
    log = log and _falls(loss[np.isfinite(loss)]) > TREND_RATIO  # a decaying run, not a sawtooth
    lv = _values(loss, log)
    ev = _values(extra, log) if extra is not None else np.empty(0)
    tops = [_bulk_top(lv)] if lv.size else []
    lo = float(np.min(np.r_[lv, ev]))
    high_v = max([*tops, *(ev.tolist())])
    pad = 0.05 * max(high_v - lo, 1e-12)
    low, high = lo - pad, high_v + pad
    vals = np.log10(np.where(loss > 0, loss, np.nan)) if log else loss
    with np.errstate(invalid="ignore"):
        clipped = np.flatnonzero(np.isfinite(vals) & (vals > high))
    conv = (lambda x: 10.0**x) if log else (lambda x: x)
    return YRange(conv(low), conv(high), log, clipped)


def draw_loss(ax: Axes, report: Report, steps: np.ndarray, loss: np.ndarray) -> None:
    """The loss (dense: median line over a raw band), eval loss, clamped outliers and shaded findings."""
    if loss.size > DENSE_ROWS:
        _band(ax, steps, loss)
    else:
        ax.plot(steps, loss, lw=0.9, color="tab:blue", label="loss")
    ev = eval_curve(report)
    if ev is not None:
        style = "o-" if ev[1].size <= 60 else "-"
        ax.plot(ev[0], ev[1], style, ms=3.5, lw=1.2, color="tab:orange", label=sanitize.plot_text(ev[2]))
    yr = y_range(loss, ev[1] if ev is not None else None)
    if yr is not None:
        if yr.log:
            ax.set_yscale("log")
        ax.set_ylim(yr.low, yr.high)
        _clamped(ax, steps, loss, yr)
    _shade(ax, report)
    _grad_spikes(ax, report, steps)


def eval_curve(report: Report) -> tuple[np.ndarray, np.ndarray, str] | None:
    """The eval loss to draw with the training loss: (steps, values, label); a perplexity is drawn as
    its natural log, the cross-entropy it stands for, so it shares the loss axis."""
    ev = main_eval_loss(report.run)
    if ev is None or not ev.n:
        return None
    if "ppl" in ev.name or "perplexity" in ev.name:
        with np.errstate(divide="ignore", invalid="ignore"):
            return ev.steps, np.log(ev.values), f"ln({ev.name})"
    return ev.steps, ev.values, ev.name


def _band(ax: Axes, steps: np.ndarray, loss: np.ndarray) -> None:
    edges = np.linspace(0, loss.size, DISPLAY_BUCKETS + 1).astype(int)
    x, mid, lo, hi = [], [], [], []
    for a, b in itertools.pairwise(edges):
        chunk = loss[a:b][np.isfinite(loss[a:b])]
        if chunk.size:
            q10, q50, q90 = np.percentile(chunk, [10, 50, 90])
            x.append(steps[(a + b - 1) // 2])
            mid.append(q50)
            lo.append(q10)
            hi.append(q90)
    ax.fill_between(x, lo, hi, color="tab:blue", alpha=0.22, lw=0, label="loss (10-90% of raw)")
    ax.plot(x, mid, lw=1.1, color="tab:blue", label="loss (median)")


def _clamped(ax: Axes, steps: np.ndarray, loss: np.ndarray, yr: YRange) -> None:
    if not yr.clipped.size:
        return
    ax.plot(
        steps[yr.clipped],
        np.full(yr.clipped.size, 0.985),
        "^",
        color="tab:red",
        ms=6,
        transform=ax.get_xaxis_transform(),
        label="clamped above the axis",
        clip_on=False,
    )
    top = int(yr.clipped[np.argmax(loss[yr.clipped])])
    ax.annotate(
        f"max {loss[top]:.4g} at step {steps[top]}",
        (steps[top], 0.95),
        xycoords=("data", "axes fraction"),
        fontsize=8,
        color="tab:red",
        ha="center",
        va="top",
    )


def _shade(ax: Axes, report: Report) -> None:
    """The localized findings' ranges; a run-wide one is drawn in the findings strip only (spans.py)."""
    seen: set[str] = set()
    steps = report.run.table[STEP]
    if steps.len() == 0:
        return
    lo, hi = float(steps.min()), float(steps.max())  # type: ignore[arg-type]
    for f in report.findings:
        if f.code not in SHADED or f.evidence.get("explained_by"):
            continue
        label, colour = SHADED[f.code]
        for a, b in finding_spans(f):  # none for a finding without steps
            if run_wide(a, b, lo, hi):
                continue  # drawn in the findings strip only
            ax.axvspan(a, b, color=colour, alpha=0.13, lw=0, label=None if label in seen else label)
            seen.add(label)


def _grad_spikes(ax: Axes, report: Report, steps: np.ndarray) -> None:
    marks = sorted({f.first_step for f in report.findings if f.code in GRAD_SPIKES and f.first_step is not None})
    if marks:
        ax.plot(
            marks,
            np.full(len(marks), 0.03),
            "v",
            color="tab:purple",
            ms=7,
            transform=ax.get_xaxis_transform(),
            label="grad-norm spike",
        )


def draw_epochs(ax: Axes, boundaries: tuple[int, ...]) -> None:
    """Epoch boundaries: dotted lines, or faint ticks when there are many."""
    many = len(boundaries) > MANY_EPOCHS
    for i, s in enumerate(boundaries):
        label = ("epoch boundaries" if many else "epoch boundary") if i == 0 else None
        if many:
            ax.axvline(s, color="0.7", lw=0.5, alpha=0.35, label=label)
        else:
            ax.axvline(s, color="0.55", ls=":", lw=1, label=label)


def fit_title(text: str, width_inches: float, fontsize: float) -> str:
    """``text`` shortened in the middle so that it fits the figure width (≈0.55 em per character)."""
    from logdoctor.renderers.rows import shorten_middle

    chars = int(width_inches * 72 / (0.55 * fontsize))
    return shorten_middle(text, max(20, chars))
