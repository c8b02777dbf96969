"""Inline SVG charts on one shared step axis, for the HTML report (no JavaScript, no external files).

Display only: lines are downsampled to their min/max envelope, points beyond the display range are
drawn at its edge and labelled with their value, finding ranges are shaded. Nothing here computes
a statistic the report relies on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from logdoctor.renderers.chartaxes import log_ticks, nice_ticks, tick_label
from logdoctor.renderers.labels import severity_colour
from logdoctor.renderers.plots import envelope
from logdoctor.sanitize import html as escape

WIDTH, LEFT, RIGHT = 960, 70, 20
#: Width of one character of an 10-11 px label, for keeping labels apart.
CHAR_PX = 6.2
LINE_COLOURS = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b")


@dataclass(frozen=True, slots=True)
class Axis:
    """The shared step axis: steps lo..hi mapped onto the plot width (a chart ``width`` px wide)."""

    lo: float
    hi: float
    width: int = WIDTH

    def x(self, step: np.ndarray | float) -> np.ndarray:
        """Pixel x of each step."""
        span = max(self.hi - self.lo, 1.0)
        return LEFT + (np.asarray(step, dtype=float) - self.lo) / span * (self.width - LEFT - RIGHT)


@dataclass(frozen=True, slots=True)
class Line:
    """One series of a chart."""

    label: str
    steps: np.ndarray
    values: np.ndarray
    markers: bool = False


@dataclass(frozen=True, slots=True)
class Shade:
    """A finding's step range (inclusive) to shade."""

    first: int
    last: int
    severity: str
    code: str


@dataclass(frozen=True, slots=True)
class Chart:
    """One panel: a title, its lines, and the finding ranges shaded on it."""

    title: str
    lines: Sequence[Line]
    shades: Sequence[Shade] = field(default_factory=tuple)
    height: int = 170
    log: bool = False
    #: what the y values measure (the axis label)
    unit: str = ""


def display_range(values: np.ndarray, log: bool) -> tuple[float, float]:
    """The y range drawn: the 1st-99th percentile widened by half its span, so one outlier never
    squashes the curve (points beyond are clamped to the edge and labelled)."""
    v = values[np.isfinite(values)]
    if log:
        v = np.log10(v[v > 0])
    if v.size == 0:
        return 0.0, 1.0
    lo, hi = np.percentile(v, [1, 99])
    pad = 0.5 * (hi - lo) if hi > lo else max(abs(hi) * 0.1, 1e-9)
    return float(max(v.min(), lo - pad)), float(min(v.max(), hi + pad)) if v.max() > v.min() else float(hi + pad)


def _ticks(lo: float, hi: float, log: bool) -> list[tuple[float, str]]:
    """Round values (1, 2, 5 x 10^k; powers of ten on a log axis), all inside the frame."""
    vals = log_ticks(lo, hi) if log else nice_ticks(lo, hi, 5)
    return [(t, tick_label(10**t) if log else tick_label(t)) for t in vals]


def _shades(chart: Chart, axis: Axis, top: int, h: int) -> list[str]:
    out = []
    for s in chart.shades:
        x0, x1 = float(axis.x(s.first)), float(axis.x(s.last))
        w = max(x1 - x0, 2.0)
        out.append(
            f'<rect x="{x0:.1f}" y="{top}" width="{w:.1f}" height="{h}" fill="{severity_colour(s.severity)}"'
            f' fill-opacity="0.15"><title>{escape(s.code)} steps {s.first}-{s.last}</title></rect>'
        )
    return out


def _line(line: Line, colour: str, axis: Axis, y_of: object, lo: float, hi: float, log: bool) -> list[str]:
    keep = np.isfinite(line.values) & ((line.values > 0) if log else True)
    steps, vals = line.steps[keep], line.values[keep]
    if steps.size == 0:
        return []
    t = np.log10(vals) if log else vals
    xs, ys = envelope(steps.astype(float), t)
    clamped = np.clip(ys, lo, hi)
    pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(axis.x(xs), y_of(clamped), strict=True))  # type: ignore[operator]
    out = [f'<polyline fill="none" stroke="{colour}" stroke-width="1.2" points="{pts}"/>']
    if line.markers:
        out += [
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{colour}"/>'
            for x, y in zip(axis.x(steps), y_of(np.clip(t, lo, hi)), strict=True)  # type: ignore[operator]
        ]
    over = np.flatnonzero((t > hi) | (t < lo))
    placed: list[tuple[float, float, bool]] = []  # (left, right, top edge) of each label drawn
    for i in over[np.argsort(-np.abs(t[over]))][:3]:
        up = bool(t[i] > hi)
        x, y = float(axis.x(steps[i])), float(y_of(hi if up else lo))  # type: ignore[operator]
        mark = "\u25b2" if up else "\u25bc"
        text = f"{mark} {vals[i]:.4g} @ {steps[i]} (clamped)"
        width = CHAR_PX * len(text)
        left = x - 3 - width if x > axis.width - 220 else x + 3
        row = sum(1 for a, b, e in placed if e == up and left < b + 4 and a < left + width + 4)
        placed.append((left, left + width, up))
        dy = (10 + 11 * row) if up else (-3 - 11 * row)  # a label that would overlap goes one row inward
        out.append(f'<text x="{left:.1f}" y="{y + dy:.1f}" class="clamp" fill="{colour}">{text}</text>')
    return out


def chart_svg(chart: Chart, axis: Axis) -> str:
    """One chart as an inline <svg> element."""
    top, h = 22, chart.height - 44
    allv = np.concatenate([ln.values for ln in chart.lines]) if chart.lines else np.zeros(0)
    lo, hi = display_range(allv, chart.log)
    span = hi - lo if hi > lo else 1.0

    def y_of(v: np.ndarray | float) -> np.ndarray:
        return top + h - (np.asarray(v, dtype=float) - lo) / span * h

    width = axis.width
    parts = [
        f'<svg width="{width}" height="{chart.height}" '
        f'viewBox="0 0 {width} {chart.height}" role="img" aria-label="{escape(chart.title)}">',
        f'<text x="{LEFT}" y="14" class="title">{escape(chart.title)}</text>',
        *_shades(chart, axis, top, h),
        f'<rect x="{LEFT}" y="{top}" width="{width - LEFT - RIGHT}" height="{h}" fill="none" stroke="#bbb"/>',
    ]
    for val, label in _ticks(lo, hi, chart.log):
        y = float(y_of(val))
        parts.append(f'<text x="{LEFT - 5}" y="{y + 4:.1f}" class="tick" text-anchor="end">{label}</text>')
    if chart.unit:
        parts.append(
            f'<text x="12" y="{top + h / 2:.1f}" class="tick" text-anchor="middle" '
            f'transform="rotate(-90 12 {top + h / 2:.1f})">{escape(chart.unit)}</text>'
        )
    for i, line in enumerate(chart.lines):
        colour = LINE_COLOURS[i % len(LINE_COLOURS)]
        parts += _line(line, colour, axis, y_of, lo, hi, chart.log)
        parts.append(
            f'<text x="{width - RIGHT - 5}" y="{top + 12 + 13 * i}" class="legend" text-anchor="end" '
            f'fill="{colour}">{escape(line.label)}</text>'
        )
    for step in nice_ticks(axis.lo, axis.hi, 6 if width >= WIDTH else 4):  # round steps, the last inside the frame
        parts.append(
            f'<text x="{float(axis.x(step)):.1f}" y="{chart.height - 8}" class="tick" '
            f'text-anchor="middle">{tick_label(step)}</text>'
        )
    parts.append(f'<text x="{LEFT - 5}" y="{chart.height - 8}" class="tick" text-anchor="end">step</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def timeline_svg(shades: Sequence[Shade], axis: Axis) -> str:
    """The findings strip: one lane per finding code, each range drawn in its severity's colour."""
    lanes = sorted({s.code for s in shades})
    height = 24 + 16 * max(1, len(lanes))
    parts = [
        f'<svg width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="findings timeline">',
        f'<text x="{LEFT}" y="12" class="title">findings over the run</text>',
    ]
    for i, code in enumerate(lanes):
        y = 18 + 16 * i
        parts.append(f'<text x="{LEFT - 5}" y="{y + 10}" class="tick" text-anchor="end">{escape(code)}</text>')
        parts.append(f'<line x1="{LEFT}" y1="{y + 6}" x2="{WIDTH - RIGHT}" y2="{y + 6}" stroke="#eee"/>')
        for s in (s for s in shades if s.code == code):
            x0, x1 = float(axis.x(s.first)), float(axis.x(s.last))
            parts.append(
                f'<rect x="{x0:.1f}" y="{y}" width="{max(x1 - x0, 3.0):.1f}" height="12" '
                f'fill="{severity_colour(s.severity)}"><title>{escape(code)} steps {s.first}-{s.last}'
                f"</title></rect>"
            )
    parts.append("</svg>")
    return "\n".join(parts)


EPOCH_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")


def scatter_svg(
    title: str, x: np.ndarray, y: np.ndarray, xlabel: str, height: int = 260, epochs: np.ndarray | None = None
) -> str:
    """A small scatter panel (batching evidence: loss against batch length), coloured by epoch."""
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    ep = np.floor(epochs[keep]).astype(int) if epochs is not None and np.isfinite(epochs[keep]).all() else None
    w, left, top, h = 460, 60, 22, height - 64
    if x.size == 0:
        return ""
    idx = np.arange(0, x.size, max(1, x.size // 3000))
    xlo, xhi = float(x.min()), float(x.max()) or 1.0
    ylo, yhi = display_range(y, False)
    px = left + (x[idx] - xlo) / max(xhi - xlo, 1e-12) * (w - left - 10)
    py = top + h - (np.clip(y[idx], ylo, yhi) - ylo) / max(yhi - ylo, 1e-12) * h
    first = int(ep.min()) if ep is not None and ep.size else 0
    colours = [EPOCH_COLOURS[(int(e) - first) % len(EPOCH_COLOURS)] for e in ep[idx]] if ep is not None else None
    dots = "".join(
        f'<circle cx="{a:.1f}" cy="{b:.1f}" r="1.6" fill="{colours[k] if colours else "#1f77b4"}" fill-opacity="0.5"/>'
        for k, (a, b) in enumerate(zip(px, py, strict=True))
    )
    legend = ""
    if ep is not None and ep.size:
        names = list(range(first, int(ep.max()) + 1))[: len(EPOCH_COLOURS)]
        legend = "".join(
            f'<text x="{w - 12}" y="{top + 12 + 12 * i}" class="legend" text-anchor="end" '
            f'fill="{EPOCH_COLOURS[i]}">epoch {e + 1 if first == 0 else e}</text>'
            for i, e in enumerate(names)
        )
    ticks = "".join(
        f'<text x="{left + (v - xlo) / max(xhi - xlo, 1e-12) * (w - left - 10):.1f}" y="{top + h + 14}" '
        f'class="tick" text-anchor="middle">{tick_label(v)}</text>'
        for v in nice_ticks(xlo, xhi, 4)
    )
    yticks = "".join(
        f'<text x="{left - 5}" y="{top + h - (v - ylo) / max(yhi - ylo, 1e-12) * h + 4:.1f}" '
        f'class="tick" text-anchor="end">{tick_label(v)}</text>'
        for v in nice_ticks(ylo, yhi, 4)
    )
    return (
        f'<svg width="{w}" height="{height}" viewBox="0 0 {w} {height}" '
        f'role="img" aria-label="{escape(title)}"><text x="{left}" y="14" class="title">{escape(title)}</text>'
        f'<rect x="{left}" y="{top}" width="{w - left - 10}" height="{h}" fill="none" stroke="#bbb"/>{dots}'
        f"{legend}{ticks}{yticks}"
        f'<text x="{(left + w) / 2:.1f}" y="{height - 8}" class="tick" text-anchor="middle">{escape(xlabel)}</text>'
        f'<text x="12" y="{top + h / 2:.1f}" class="tick" text-anchor="middle" '
        f'transform="rotate(-90 12 {top + h / 2:.1f})">loss</text></svg>'
    )
