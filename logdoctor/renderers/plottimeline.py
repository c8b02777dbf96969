"""The figure's findings strip: one lane per finding code over the loss panel's steps, each range in
its severity's colour (the HTML report's timeline, drawn with matplotlib)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from logdoctor import sanitize
from logdoctor.model import Report
from logdoctor.renderers.labels import severity_colour
from logdoctor.renderers.spans import finding_spans

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: Inches of figure height per lane of the strip, and for its title and margins.
LANE_INCHES = 0.22
STRIP_BASE_INCHES = 0.45
#: The narrowest bar, as a share of the run, so that a one-step finding stays visible.
MIN_BAR = 0.004
#: The strip's axes label (how tests and readers of the figure find it).
STRIP_LABEL = "findings timeline"


def lanes(report: Report) -> dict[str, list[tuple[int, int, str]]]:
    """Finding code -> its (first, last, severity) ranges, codes in report order; none without steps."""
    out: dict[str, list[tuple[int, int, str]]] = {}
    for f in report.findings:
        for first, last in finding_spans(f):
            out.setdefault(f.code, []).append((first, last, f.severity.label))
    return out


def strip_inches(n_lanes: int) -> float:
    """The strip's height in the figure for ``n_lanes`` lanes."""
    return STRIP_BASE_INCHES + LANE_INCHES * n_lanes


def draw_timeline(ax: Axes, report: Report, run_first: float, run_last: float) -> None:
    """Every finding's range on its code's lane (the first code on top), on the loss panel's step axis."""
    found = lanes(report)
    span = max(1.0, run_last - run_first)
    for i, (code, ranges) in enumerate(found.items()):
        y = len(found) - 1 - i
        for first, last, severity in ranges:
            width = max(float(last - first), MIN_BAR * span)
            x0 = min(float(first), run_last - width) if last - first < width else float(first)
            ax.broken_barh([(x0, width)], (y - 0.35, 0.7), color=severity_colour(severity), label=code)
    ax.set_yticks(range(len(found)), [sanitize.plot_text(c) for c in reversed(found)], fontsize=8)
    ax.set_ylim(-0.6, len(found) - 0.4)
    ax.tick_params(axis="x", labelbottom=False, length=0)
    ax.grid(axis="y", color="0.92", lw=0.8)
    ax.set_axisbelow(True)
    ax.set_title("findings over the run", fontsize=9, loc="left")
    ax.set_label(STRIP_LABEL)
