"""Axis helpers shared by the charts: round tick values inside the frame, and the unit of each panel."""

from __future__ import annotations

import math

from logdoctor.detectors.steptimes import StepTimes
from logdoctor.model import THROUGHPUT


def nice_step(span: float, n: int = 5) -> float:
    """The tick spacing 1, 2 or 5 x 10^k that puts about ``n`` ticks on ``span``."""
    if not math.isfinite(span) or span <= 0:
        return 1.0
    raw = span / max(1, n)
    base = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 5.0, 10.0):
        if raw <= m * base:
            return m * base
    return 10.0 * base


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values (multiples of 1, 2 or 5 x 10^k) within [lo, hi]: the last one inside the frame."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    step = nice_step(hi - lo, n)
    first = math.ceil(lo / step - 1e-9) * step
    count = math.floor((hi - first) / step + 1e-9) + 1
    return [round(first + i * step, 12) for i in range(max(0, count))]


def log_ticks(lo: float, hi: float) -> list[float]:
    """Ticks for a log axis given in log10 units: the powers of ten inside, with 2 and 5 when few."""
    powers = [float(k) for k in range(math.ceil(lo - 1e-9), math.floor(hi + 1e-9) + 1)]
    if len(powers) >= 3:
        return powers
    extra = [k + math.log10(m) for k in range(math.floor(lo), math.floor(hi) + 1) for m in (1, 2, 5)]
    inside = sorted(t for t in extra if lo - 1e-9 <= t <= hi + 1e-9)
    if len(inside) >= 2:
        return inside
    return [math.log10(v) for v in nice_ticks(10.0**lo, 10.0**hi, 4) if v > 0]  # under a decade: linear values


def tick_label(value: float) -> str:
    """A tick value as short text: ``0.5``, ``2,000``, ``1e-05``."""
    if value == 0:
        return "0"
    if abs(value) >= 1000 and float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:.3g}"


def time_unit(st: StepTimes) -> str:
    """What one value of the time-per-step panel measures, as the log gives it."""
    src = st.source.lower()
    if st.kind == "duration":
        return "ms per step" if "ms" in src else "seconds per step"
    if st.kind == "rate":
        if st.source == THROUGHPUT:
            return "seconds per token or word (1 / throughput)"
        for word, unit in (
            ("sample", "sample"),
            ("batch", "batch"),
            ("token", "token"),
            ("update", "step"),
            ("ups", "step"),
            ("step", "step"),
        ):
            if word in src:
                return f"seconds per {unit} (1 / {st.source})"
    return f"time per step (from {st.source}, its unit)"
