"""The comparison figure: both losses by step and by tokens, spikes marked, and a throughput panel."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import PurePath
from typing import TYPE_CHECKING

import numpy as np

from logdoctor import sanitize
from logdoctor.comparison.result import Comparison
from logdoctor.comparison.rows import name
from logdoctor.comparison.series import RunSeries, run_series
from logdoctor.errors import ConfigError
from logdoctor.model import Report
from logdoctor.renderers.plots import _METADATA, envelope

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def _kind(dest: str) -> str:
    ext = PurePath(dest).suffix.lower().lstrip(".")
    if ext not in _METADATA:
        raise ConfigError(f"--plot takes a .png, .svg or .pdf file; got {dest!r}")
    return ext


def _loss(ax: Axes, x: np.ndarray, s: RunSeries, report: Report, color: str, label: str) -> None:
    ax.plot(*envelope(x, s.loss), lw=0.8, color=color, label=label)
    spikes = np.asarray(report.artifacts.spike_steps, dtype=np.float64)
    if spikes.size:
        pos = np.searchsorted(s.steps, spikes).clip(0, s.steps.size - 1)
        ax.plot(x[pos], s.loss[pos], "o", mfc="none", mec=color, ms=6, mew=1.3)


def _throughput(ax: Axes, s: RunSeries, color: str, label: str) -> None:
    if s.tok_s is None:
        return
    ax.plot(np.arange(s.tok_s.size), s.tok_s, lw=0.6, color=color, alpha=0.8, label=label)
    ax.axhline(float(np.median(s.tok_s)), color=color, ls="--", lw=1)


def plotter(dest: str) -> Callable[[Comparison], bytes]:
    """The drawer of ``dest``'s format, checked before any run is analysed (ConfigError if unknown)."""
    kind = _kind(dest)
    return lambda c: render_plot(c, kind)


def render_plot(c: Comparison, kind: str = "png") -> bytes:
    """The figure as the bytes of a png, svg or pdf file; spikes are open circles."""
    buf = io.BytesIO()
    figure(c).savefig(buf, format=kind, metadata=_METADATA[kind])
    return buf.getvalue()


def figure(c: Comparison) -> Figure:
    """Both losses by step and by tokens seen (spikes as open circles), and the throughput."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 9), layout="constrained")
    by_step, by_tok, tp = fig.subplots(3, 1)
    reports = [c.baseline, *(v.candidate for v in c.versus)]
    for i, report in enumerate(reports):
        s = run_series(report.run)
        color, label = COLORS[i % len(COLORS)], sanitize.plot_text(("baseline: " if i == 0 else "") + name(report))
        _loss(by_step, s.steps, s, report, color, label)
        if s.tokens is not None:
            _loss(by_tok, s.tokens, s, report, color, label)
        _throughput(tp, s, color, label)
    by_step.set(xlabel="step", ylabel="loss", title="loss by step (o = spike)")
    by_tok.set(xlabel="tokens seen", ylabel="loss", title="loss by tokens seen")
    tp.set(xlabel="logged row", ylabel="tokens/s", title="throughput (dashed: median)")
    for ax in (by_step, by_tok, tp):
        if ax.has_data():
            ax.legend(loc="upper right", fontsize=8)
    return fig
