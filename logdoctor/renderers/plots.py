"""One diagnostic figure per run (PNG/SVG/PDF); matplotlib is imported only when a plot is drawn."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from logdoctor import sanitize
from logdoctor.detectors.evalseries import main_eval_loss
from logdoctor.errors import ConfigError
from logdoctor.model import ACC, EPOCH, LEN_MEAN, LOSS, LR, STEP, Report
from logdoctor.renderers.base import Renderer
from logdoctor.renderers.plotfold import draw_evals, draw_fold, eval_metrics, found_period
from logdoctor.renderers.plotloss import draw_epochs, draw_loss, fit_title
from logdoctor.renderers.plottimeline import draw_timeline, lanes, strip_inches
from logdoctor.renderers.rows import batching_line, plot_health

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: savefig metadata that would otherwise hold the date or version (deterministic output).
_METADATA: dict[str, dict[str, Any]] = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None},
}


#: Display limits: a line keeps its min/max envelope over this many buckets, a scatter this many points.
LINE_BUCKETS = 2000
SCATTER_POINTS = 20000


def envelope(x: np.ndarray, y: np.ndarray, buckets: int = LINE_BUCKETS) -> tuple[np.ndarray, np.ndarray]:
    """Downsample a line for display, keeping each bucket's min and max so spikes stay visible."""
    if x.size <= 2 * buckets:
        return x, y
    edges = np.linspace(0, x.size, buckets + 1).astype(int)[:-1]
    with np.errstate(invalid="ignore"):
        lo, hi = np.fmin.reduceat(y, edges), np.fmax.reduceat(y, edges)
    xs = np.repeat(x[edges], 2)
    ys = np.column_stack([lo, hi]).ravel()
    return xs, ys


#: Magnitudes beyond this cannot be drawn (an axis spanning ±1e308 overflows): they are drawn as gaps.
DRAW_LIMIT = 1e300


def drawable(y: np.ndarray) -> np.ndarray:
    """``y`` as floats with NaN where the value is non-finite or beyond ±DRAW_LIMIT."""
    y = np.asarray(y, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(y) <= DRAW_LIMIT, y, np.nan)


def thin(n: int, limit: int = SCATTER_POINTS) -> np.ndarray:
    """Evenly strided indices of at most ``limit`` points (deterministic)."""
    return np.arange(0, n, max(1, -(-n // limit)))


def _epoch_index(report: Report, steps: np.ndarray) -> np.ndarray | None:
    t = report.run.table
    if EPOCH in t.columns and report.run.has(EPOCH):
        return np.floor(t[EPOCH].fill_null(strategy="forward").fill_null(0).to_numpy()).astype(int)
    bounds = report.artifacts.epoch_boundaries
    return np.searchsorted(np.asarray(bounds), steps, side="right") if bounds else None


def _loss_panel(ax: Axes, report: Report, steps: np.ndarray, loss: np.ndarray) -> None:
    a = report.artifacts
    beyond = np.isfinite(loss) & np.isnan(drawable(loss))
    loss = drawable(loss)
    draw_loss(ax, report, steps, loss)
    bad = ~np.isfinite(loss)
    if bad.any():  # NaN has no height: mark it along the bottom edge
        ax.plot(
            steps[bad],
            np.full(bad.sum(), 0.04),
            "x",
            color="black",
            ms=7,
            mew=1.5,
            transform=ax.get_xaxis_transform(),
            label=f"NaN/inf loss{f' or beyond ±{DRAW_LIMIT:g}' if beyond.any() else ''}",
        )
    if a.spike_steps:
        pos = np.searchsorted(steps, np.asarray(a.spike_steps)).clip(0, steps.size - 1)
        ax.plot(steps[pos], loss[pos], "o", mfc="none", mec="tab:red", ms=7, mew=1.5, label="spike", clip_on=True)
    draw_epochs(ax, a.epoch_boundaries)
    for i, s in enumerate(a.changepoints):
        ax.axvline(s, color="tab:purple", ls="--", lw=1.3, label="changepoint" if i == 0 else None)
    for i, s in enumerate(report.meta.resume_steps):
        ax.axvline(s, color="tab:orange", ls="-.", lw=1.3, label="resume" if i == 0 else None)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    other = ACC if report.run.has(ACC) else LR if report.run.has(LR) else None
    if other:
        twin = ax.twinx()
        twin.plot(*envelope(steps, drawable(report.run.table[other].to_numpy())), lw=0.8, color="tab:green", alpha=0.55)
        twin.set_ylabel(f"{other} (green)", color="tab:green")
        ax.set_zorder(twin.get_zorder() + 1)
        ax.patch.set_visible(False)
    ax.legend(loc="upper right", fontsize=8, framealpha=0.85, ncols=2)
    ax.set_title("loss over steps" + (" (log scale)" if ax.get_yscale() == "log" else ""))


def _length_panel(ax: Axes, report: Report, steps: np.ndarray, loss: np.ndarray) -> None:
    keep = thin(steps.size)
    epochs = _epoch_index(report, steps)
    epochs = None if epochs is None else epochs[keep]
    length, loss = drawable(report.run.table[LEN_MEAN].to_numpy()[keep]), drawable(loss[keep])
    if epochs is None:
        ax.scatter(length, loss, s=6, color="tab:blue", alpha=0.7, linewidths=0)
    elif np.unique(epochs).size <= 10:
        for e in np.unique(epochs):
            sel = epochs == e
            ax.scatter(length[sel], loss[sel], s=6, alpha=0.7, linewidths=0, label=f"epoch {e + 1}")
        ax.legend(loc="upper left", fontsize=8, markerscale=2, framealpha=0.85)
    else:
        sc = ax.scatter(length, loss, c=epochs + 1, s=6, cmap="viridis", alpha=0.7, linewidths=0)
        ax.figure.colorbar(sc, ax=ax, label="epoch")
    ax.set_xlabel("batch mean length (tokens per sequence)")
    ax.set_ylabel("loss")
    ax.set_title("loss vs batch mean length, by epoch")


def _periodogram_panel(ax: Axes, report: Report, narrow: bool = False) -> None:
    a = report.artifacts
    ax.plot(a.periodogram_period, drawable(np.asarray(a.periodogram_power)), lw=1, color="tab:blue")
    ax.set_xscale("log")
    if a.period:
        ax.axvline(a.period, color="tab:red", ls="--", lw=1.3, label=f"detected period {a.period:.3g} steps")
    spe = report.series.steps_per_epoch
    if spe:
        ax.axvline(spe, color="0.55", ls=":", lw=1.3, label=f"epoch length {spe} steps")
    if a.period or spe:
        ax.legend(loc="upper left", fontsize=8)
    ax.set_xlabel("period (steps)")
    ax.set_ylabel("power (loss²)")
    nothing = (":\n" if narrow else ": ") + "no period found"  # a half-width panel wraps its title
    ax.set_title("periodogram of the detrended loss" + ("" if found_period(report) else nothing))


def _recurrence_panel(ax: Axes, report: Report) -> None:
    rec = np.asarray(report.artifacts.recurrence_by_epoch) * 100
    xs = np.arange(1, rec.size + 1)
    bars = ax.bar(xs, rec, color="tab:red" if report.verdict.batching == "static" else "tab:blue")
    ax.bar_label(bars, fmt="%.0f%%", fontsize=8)
    ax.set_ylim(0, 105)
    ax.set_xticks(xs)
    ax.set_xlabel("epoch")
    ax.set_ylabel("% batches seen before")
    ax.set_title("batch signatures recurring from earlier epochs")


#: Figure inches: the loss panel's height, the lower row's, and the width of one lower panel.
LOSS_INCHES, ROW_INCHES, PANEL_INCHES = 4.0, 3.6, 5.5


def _layout(
    report: Report, steps: np.ndarray, loss: np.ndarray, extra: list[tuple[Callable[[Axes], None], bool]]
) -> Figure:
    """The findings strip (when a finding has steps), the loss panel under it on the same step axis,
    then one row of the other panels. A half-size panel (the periodogram that found nothing) is half
    as wide as the others, or, alone in its row, half as high: no empty half panel is left."""
    from matplotlib.figure import Figure

    found = lanes(report)
    alone = len(extra) == 1 and extra[0][1]
    ratios = [0.5 if half and not alone else 1.0 for _, half in extra]
    heights = [strip_inches(len(found))] if found else []
    heights += [LOSS_INCHES] + ([ROW_INCHES / 2 if alone else ROW_INCHES] if extra else [])
    fig = Figure(figsize=(PANEL_INCHES * max(sum(ratios), 2), sum(heights)), layout="constrained")
    grid = fig.add_gridspec(len(heights), 1, height_ratios=heights)
    main = fig.add_subplot(grid[1 if found else 0])
    _loss_panel(main, report, steps, loss)
    if found and steps.size:
        draw_timeline(fig.add_subplot(grid[0], sharex=main), report, float(steps.min()), float(steps.max()))
    if extra:
        row = grid[-1].subgridspec(1, len(extra), width_ratios=ratios)
        for i, (draw, _) in enumerate(extra):
            draw(fig.add_subplot(row[0, i]))
    return fig


def figure(report: Report) -> Figure:
    """Build the figure: findings strip, loss over steps, then the panels the report has data for."""
    t, a = report.run.table, report.artifacts
    steps, loss = t[STEP].to_numpy(), t[LOSS].to_numpy().astype(float)
    extra: list[tuple[Callable[[Axes], None], bool]] = []
    period = found_period(report)
    drawn = main_eval_loss(report.run)  # drawn with the training loss (a perplexity as its log)
    evals = eval_metrics(report, drawn.name if drawn is not None else None)
    if report.run.has(LEN_MEAN):
        extra.append((lambda ax: _length_panel(ax, report, steps, loss), False))
    if period is not None:
        extra.append((lambda ax: draw_fold(ax, steps, loss, period), False))
    if a.periodogram_period:  # only where periodicity was tested; half size when it found nothing
        narrow = period is None and len(extra) + bool(a.recurrence_by_epoch) + bool(evals) > 0  # half width
        extra.append((lambda ax: _periodogram_panel(ax, report, narrow), period is None))
    if a.recurrence_by_epoch:
        extra.append((lambda ax: _recurrence_panel(ax, report), False))
    if evals:  # eval values other than the loss drawn with the training loss
        extra.append((lambda ax: draw_evals(ax, report, evals), False))
    fig = _layout(report, steps, loss, extra)
    width = fig.get_figwidth()
    name = sanitize.terminal(PurePath(report.meta.path).name)  # a line break in it is no title line
    first = fit_title(f"{name}: {plot_health(report)}", width, 12)
    title = f"{first}\n{fit_title(batching_line(report), width, 10)}"
    fig.suptitle("\n".join(sanitize.plot_text(t) for t in title.split("\n")), fontsize=11)
    return fig


def render_figure(report: Report, fmt: str) -> bytes:
    """The figure as PNG, SVG or PDF bytes, identical for identical input."""
    import matplotlib

    fig = figure(report)
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "logdoctor", "svg.fonttype": "path"}):
        fig.savefig(buf, format=fmt, dpi=100, metadata=_METADATA[fmt])
    return buf.getvalue()


class PlotRenderer(Renderer):
    """``--format png`` (and svg/pdf subclasses): the diagnostic figure of one run."""

    name = "png"
    extension = ".png"
    is_binary = True
    fmt: ClassVar[str] = "png"

    def render(self, report: Report) -> bytes:
        return render_figure(report, self.fmt)

    def render_many(self, reports: Sequence[Report]) -> bytes:
        if len(reports) != 1:
            raise ConfigError(f"a plot shows one run, got {len(reports)}; plot each input on its own")
        return self.render(reports[0])


class SvgPlotRenderer(PlotRenderer):
    """The diagnostic figure as SVG."""

    name = "svg"
    extension = ".svg"
    fmt = "svg"


class PdfPlotRenderer(PlotRenderer):
    """The diagnostic figure as PDF."""

    name = "pdf"
    extension = ".pdf"
    fmt = "pdf"


PLOT_RENDERERS: tuple[type[PlotRenderer], ...] = (PlotRenderer, SvgPlotRenderer, PdfPlotRenderer)


def plot_renderer_for(path: str) -> type[PlotRenderer]:
    """The plot renderer for an output file name, by extension; ConfigError otherwise."""
    for cls in PLOT_RENDERERS:
        if path.lower().endswith(cls.extension):
            return cls
    raise ConfigError(f"{path}: plot format from extension must be .png, .svg or .pdf")
