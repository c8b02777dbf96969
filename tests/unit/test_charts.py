"""Charts that do not mislead: round ticks inside the frame, labels apart, whole-run findings in the
strip only, units on every axis, scatter by epoch, periodogram only when tested, the folded loss."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from logdoctor import codes
from logdoctor.model import Report
from logdoctor.renderers.chartaxes import log_ticks, nice_ticks
from logdoctor.renderers.html import render_html
from logdoctor.renderers.plots import figure
from logdoctor.renderers.svgcharts import Axis, Chart, Line, chart_svg
from tests.conftest import FIXTURES
from tests.reportfactory import REPORTS
from tests.reports import report_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _round(v: float) -> bool:
    if v == 0:
        return True
    mant = abs(v) / 10 ** math.floor(math.log10(abs(v)))
    return any(math.isclose(mant, m * k, rel_tol=1e-9) for m in (1, 2, 5) for k in (1, 2, 3, 4, 5, 6, 7, 8, 9))


@pytest.mark.parametrize(("lo", "hi"), [(1, 590), (2.31, 4.78), (0, 1e-3), (-3.2, 7.9), (99_000, 1_234_567)])
def test_ticks_are_round_and_inside_the_frame(lo: float, hi: float) -> None:
    ticks = nice_ticks(lo, hi, 5)
    assert 2 <= len(ticks) <= 11 and all(lo <= t <= hi for t in ticks)
    step = ticks[1] - ticks[0]
    assert _round(step) and all(math.isclose(t / step, round(t / step), abs_tol=1e-6) for t in ticks)


def test_log_ticks_are_round_values() -> None:
    for lo, hi in ((-1.2, 1.7), (0.1, 0.6), (-0.5, 0.8)):
        assert all(_round(round(10**t, 9)) and lo - 1e-9 <= t <= hi + 1e-9 for t in log_ticks(lo, hi))


def _labels(svg: str, cls: str) -> list[tuple[float, float, str]]:
    pat = rf'<text x="([\d.-]+)" y="([\d.-]+)" class="{cls}"[^>]*>([^<]*)</text>'
    return [(float(x), float(y), t) for x, y, t in re.findall(pat, svg)]


def test_step_ticks_are_round_and_the_last_inside_the_frame() -> None:
    axis = Axis(1.0, 590.0)
    svg = chart_svg(Chart("loss", [Line("loss", np.arange(1, 591), np.linspace(3, 2, 590))], unit="loss"), axis)
    steps = [float(t.replace(",", "")) for _, y, t in _labels(svg, "tick") if y == 162 and t[0].isdigit()]
    assert steps == [100, 200, 300, 400, 500]
    assert "rotate(-90" in svg and ">loss</text>" in svg and ">step</text>" in svg


def test_clamped_outlier_labels_never_overlap() -> None:
    steps = np.arange(1, 1001)
    v = np.linspace(3.0, 2.0, 1000)
    v[[500, 503, 506]] = [400.0, 500.0, 600.0]  # three outliers a few pixels apart
    svg = chart_svg(Chart("loss", [Line("loss", steps, v)]), Axis(1, 1000))
    boxes = [(x, y, len(t) * 6.2) for x, y, t in _labels(svg, "clamp")]
    assert len(boxes) == 3
    for i, (x, y, w) in enumerate(boxes):
        for x2, y2, w2 in boxes[i + 1 :]:
            assert abs(y - y2) >= 10 or x + w <= x2 or x2 + w2 <= x


def test_a_whole_run_finding_is_in_the_strip_not_on_every_panel() -> None:
    report = report_of(str(FIXTURES / "example.log"))  # LD505 over steps 1-590
    page = render_html(report)
    strip, charts = page.split("findings over the run", 1)[1].split("<h2>Curves", 1)
    assert "LD505 steps 1-590" in strip
    assert "LD505" not in charts.split("<h2>Findings</h2>")[0]


def test_every_chart_has_units_and_the_scatter_is_coloured_by_epoch() -> None:
    page = render_html(report_of(str(FIXTURES / "example.log")))
    svgs = re.findall(r"<svg.*?</svg>", page, flags=re.S)
    charts = [s for s in svgs if "findings timeline" not in s]
    assert charts and all("rotate(-90" in s for s in charts)
    assert "seconds per" in page
    scatter = next(s for s in charts if "coloured by epoch" in s)
    assert len(set(re.findall(r'<circle[^>]*fill="(#[0-9a-f]{6})"', scatter))) >= 3
    assert "epoch 3" in scatter


def _titles(report: object) -> list[str]:
    return [ax.get_title() for ax in figure(report).axes]  # type: ignore[arg-type]


def test_a_periodic_loss_gets_a_folded_panel_and_a_full_periodogram() -> None:
    titles = _titles(REPORTS["not_batching"]())  # LD201, period 150
    assert any(t.startswith("the loss folded by its period (150 steps)") for t in titles)
    assert "periodogram of the detrended loss" in titles


def _drawn(report: object) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = figure(report)  # type: ignore[arg-type]
    FigureCanvasAgg(fig).draw()  # constrained layout places the axes when drawn
    return fig


def _box(fig: Figure, title: str) -> tuple[float, float, float, float]:
    """(left, bottom, width, height) of the panel whose title starts with ``title``, in inches."""
    ax = next(ax for ax in fig.axes if ax.get_title().startswith(title))
    p = ax.get_position()
    w, h = fig.get_size_inches()
    return p.x0 * w, p.y0 * h, p.width * w, p.height * h


def test_periodogram_half_size_when_nothing_was_found_and_absent_when_untested() -> None:
    base = REPORTS["not_batching"]()
    quiet = dataclasses.replace(base, findings=tuple(f for f in base.findings if f.code != "LD201"))
    fig = _drawn(quiet)  # the periodogram alone in its row: half as high, nothing empty below it
    _, bottom, _, height = _box(fig, "periodogram")
    assert height < 0.6 * _box(fig, "loss over steps")[3] and fig.axes[-1].get_title().endswith("no period found")
    assert bottom < 0.8  # only its tick labels and axis label below it, no empty half panel
    fig = _drawn(base)  # a period found: full size, as wide and high as the folded loss beside it
    _, _, width, height = _box(fig, "periodogram")
    _, _, fold_width, fold_height = _box(fig, "the loss folded")
    assert abs(height - fold_height) < 0.3 and width > 0.8 * fold_width
    untested = dataclasses.replace(
        quiet, artifacts=dataclasses.replace(quiet.artifacts, periodogram_period=(), periodogram_power=())
    )
    assert not any(t.startswith(("periodogram", "the loss folded")) for t in _titles(untested))
    spike = codes.finding("LD101", "x", first_step=5)
    assert not any("folded" in t for t in _titles(dataclasses.replace(quiet, findings=(spike,))))


def test_a_half_size_periodogram_beside_other_panels_is_half_as_wide_and_as_high_as_they() -> None:
    report = report_of(str(FIXTURES / "sim" / "shuffled.log"))
    fig = _drawn(report)
    _, bottom, width, height = _box(fig, "periodogram")
    assert fig.axes[-1].get_title() != "periodogram"  # it has neighbours in its row
    for other in ("loss vs batch mean length", "batch signatures recurring"):
        _, b, w, h = _box(fig, other)
        assert abs(b - bottom) < 0.05 and abs(h - height) < 0.3  # the row's full height: nothing left empty
        assert width < 0.65 * w


def _finding_report() -> Report:
    base = REPORTS["healthy"]()
    steps = base.run.table["step"]
    lo, hi = int(steps.min()), int(steps.max())  # type: ignore[arg-type]
    span = hi - lo
    found = (
        codes.finding("LD002", "diverged", first_step=lo + span // 20, last_step=hi),
        codes.finding("LD403", "rose", first_step=lo + span // 2, last_step=lo + span // 2 + span // 10),
    )
    return dataclasses.replace(base, findings=found)


def test_the_figure_draws_a_whole_run_finding_in_its_strip_and_shades_only_the_local_one() -> None:
    from logdoctor.renderers.plottimeline import STRIP_LABEL

    report = _finding_report()
    fig = figure(report)
    loss = fig.axes[0]
    assert loss.get_title().startswith("loss over steps")
    assert {p.get_label() for p in loss.patches} & {"divergence", "loss rise"} == {"loss rise"}
    strip = next(ax for ax in fig.axes if ax.get_label() == STRIP_LABEL)
    assert strip.get_shared_x_axes().joined(strip, loss)
    bars = {c.get_label(): c.get_paths()[0].get_extents() for c in strip.collections}
    assert set(bars) == {"LD002", "LD403"}
    ld002 = next(f for f in report.findings if f.code == "LD002")
    assert (bars["LD002"].x0, bars["LD002"].x1) == (ld002.first_step, ld002.last_step)
    assert [t.get_text() for t in strip.get_yticklabels()] == ["LD403", "LD002"]  # the first code on top


def test_no_strip_without_a_finding_over_steps() -> None:
    from logdoctor.renderers.plottimeline import STRIP_LABEL

    assert not any(ax.get_label() == STRIP_LABEL for ax in figure(REPORTS["empty"]()).axes)


@pytest.mark.reallogs
def test_a_diverged_real_run_is_not_shaded_over_its_whole_loss_panel(reallogs_dir: Path) -> None:
    """LD002 covers 92-3000 as a whole but is diverged on four stretches (issue 28.6): the loss panel
    shades those stretches, none of them the whole run, and the strip draws the same four."""
    from matplotlib.patches import Rectangle

    report = report_of(str(reallogs_dir / "hf_trainer_state_lyric_lora_diverged.json"))
    ld002 = next(f for f in report.findings if f.code == "LD002")
    assert len(ld002.spans) >= 2 and (ld002.first_step, ld002.last_step) == (92, 3000)
    fig = figure(report)
    shaded = {
        (round(p.get_x()), round(p.get_x() + p.get_width()))
        for p in fig.axes[0].patches
        if isinstance(p, Rectangle) and p.get_width() > 0
    }
    assert set(ld002.spans) <= shaded
    assert all(b - a < 0.5 * (3000 - 92) for a, b in shaded)  # nothing shades the whole run
    strip = next(ax for ax in fig.axes if ax.get_label() == "findings timeline")
    extents = [c.get_paths()[0].get_extents() for c in strip.collections if c.get_label() == "LD002"]
    assert [(e.x0, e.x1) for e in extents] == [tuple(map(float, s)) for s in ld002.spans]


def test_a_grouped_run_is_folded_by_its_megabatch_period() -> None:
    report = report_of(str(FIXTURES / "example.log"))
    assert report.verdict.batching == "grouped"
    assert "the loss folded by its period (78 steps)" in _titles(report)


def test_eval_metrics_are_drawn_whenever_the_log_has_them() -> None:
    import polars as pl

    base = REPORTS["healthy"]()
    assert "eval metrics" not in _titles(base)
    evals = pl.DataFrame({"step": [100, 200, 300], "line_no": [1, 2, 3], "eval_bleu": [12.0, 15.5, 17.25]})
    with_evals = dataclasses.replace(base, run=dataclasses.replace(base.run, evals=evals))
    fig = figure(with_evals)
    panel = next(ax for ax in fig.axes if ax.get_title() == "eval metrics")
    assert [ln.get_label() for ln in panel.get_lines()] == ["eval_bleu"]
    assert list(panel.get_lines()[0].get_ydata()) == [12.0, 15.5, 17.25]  # the log's values, as logged


def _svg(page: str, label: str) -> str:
    return re.search(rf'<svg [^>]*aria-label="{re.escape(label)}">.*?</svg>', page, flags=re.S).group(0)  # type: ignore[union-attr]


def test_html_draws_every_eval_series_two_to_a_row_when_there_are_many() -> None:
    report = report_of(str(FIXTURES / "formats" / "fairseq.log"))
    ev = report.run.evals
    losses, others = ["val_loss", "nll_loss"], ["ppl", "throughput", "tokens", "seqs"]
    page = render_html(report)
    main = _svg(page, "loss (train) and eval loss")
    assert all(f">{name}</text>" in main for name in losses)  # eval losses beside the training loss
    grid = page.split('<div class="panels evals">', 1)[1].split("</div>", 1)[0]
    for name in others:  # every other series, each its own chart on the shared step axis, as logged
        chart = _svg(grid, f"eval: {name}")
        assert 'width="474"' in chart
        assert chart.count("<circle") == ev[name].drop_nulls().len()


def test_html_draws_one_or_two_eval_metrics_full_width() -> None:
    import polars as pl

    base = REPORTS["healthy"]()
    evals = pl.DataFrame(
        {
            "step": [100, 200, 300],
            "line_no": [1, 2, 3],
            "eval_bleu": [12.0, 15.5, 17.25],
            "eval_wer": [0.4, 0.35, 0.3],
            "eval_loss": [2.0, 1.9, 1.85],
        }
    )
    page = render_html(dataclasses.replace(base, run=dataclasses.replace(base.run, evals=evals)))
    assert 'class="panels evals"' not in page
    for name in ("eval_bleu", "eval_wer"):
        assert 'width="960"' in _svg(page, f"eval: {name}")
    assert ">eval_loss</text>" in _svg(page, "loss (train) and eval loss")
