"""The self-contained HTML report: health summary, findings timeline, charts on one step axis, findings.

One file with inline CSS and inline SVG: no JavaScript, no fonts, images or styles from anywhere else.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from logdoctor.detectors.evalnoise import metric_columns
from logdoctor.detectors.steptimes import step_times
from logdoctor.model import EPOCH, GRAD_NORM, LEN_MEAN, LOSS, LR, PAD_FRAC, STEP, Report
from logdoctor.renderers.base import Renderer
from logdoctor.renderers.chartaxes import time_unit
from logdoctor.renderers.rows import build_rows, facts
from logdoctor.renderers.runlines import earlier_lines, earlier_title
from logdoctor.renderers.spans import finding_spans, run_wide
from logdoctor.renderers.svgcharts import Axis, Chart, Line, Shade, chart_svg, scatter_svg, timeline_svg
from logdoctor.sanitize import html as escape

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1000px;color:#222}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:22px 0 6px;border-bottom:1px solid #ddd}
.status{padding:10px 14px;border-radius:6px;margin:10px 0;font-weight:600}
.ok{background:#e6f4ea;color:#1e6b35}.warning{background:#fff4e5;color:#8a4b00}.error{background:#fdecea;color:#a3221b}
ul.worst{margin:6px 0 0 0;font-weight:400}
svg{display:block;margin:6px 0} svg text{font:11px sans-serif} svg .title{font-weight:600;font-size:12px}
svg .tick{fill:#555} svg .clamp{font-size:10px} svg .legend{font-size:11px}
table{border-collapse:collapse;width:100%} td,th{border-bottom:1px solid #eee;padding:4px 6px;vertical-align:top;
text-align:left} th{background:#f6f6f6} .sev-error{color:#a3221b;font-weight:600}
.sev-warning{color:#8a4b00;font-weight:600} .sev-info{color:#555} .ev{color:#555;font-size:12px;margin:2px 0 0 0}
.facts td:first-child{color:#555;width:200px} .panels{display:flex;flex-wrap:wrap;gap:12px}
"""


def _summary(report: Report) -> str:
    """The report's health from the shared rows: its status, the worst problems, the batching line."""
    rows = build_rows(report)
    lines = [text if not level or level == "ok" else f"{level.upper()} {text}" for level, text in rows.headline]
    n = len(report.problems)
    head, worst = (
        (lines[0], lines[1:]) if not n else (f"{n} problem{'s' if n > 1 else ''} found (worst: {report.status})", lines)
    )
    items = "".join(f"<li>{escape(x)}</li>" for x in worst)
    return (
        f'<div class="status {report.status}">{escape(head)}'
        f"{f'<ul class=worst>{items}</ul>' if items else ''}</div><p>{escape(rows.batching)}</p>"
    )


def _shades(report: Report, charts: bool = False) -> list[Shade]:
    """Finding ranges: all for the timeline strip; on the charts only the localized ones (spans.py)."""
    t = report.run.table[STEP]
    lo, hi = float(t.min()), float(t.max())  # type: ignore[arg-type]
    out = []
    for f in report.findings:
        for a, b in finding_spans(f):  # none for a finding without steps
            if charts and run_wide(a, b, lo, hi):
                continue
            out.append(Shade(int(a), int(b), f.severity.label, f.code))
    return out


def _col(t: pl.DataFrame, name: str) -> np.ndarray:
    return t[name].cast(pl.Float64).to_numpy().astype(float)


#: Eval losses drawn with the training loss; further eval losses get a chart each, like every other
#: eval metric.
WITH_TRAIN_LOSS = 3
#: Up to this many eval charts are full width; more are drawn half width, two to a row, shorter.
FULL_WIDTH_EVALS = 2
HALF_WIDTH, HALF_HEIGHT = 474, 150


def _eval_series(report: Report) -> tuple[list[Line], list[Line]]:
    """Every eval series the log has, as (eval losses drawn with the training loss, the rest)."""
    ev = report.run.evals
    if ev.height == 0 or STEP not in ev.columns:
        return [], []
    ev = ev.filter(pl.col(STEP).is_not_null())
    names = [c for c in metric_columns(ev) if ev[c].null_count() < ev.height]
    with_train = [c for c in names if "loss" in c][:WITH_TRAIN_LOSS]
    lines = {c: Line(c, ev[STEP].to_numpy(), _col(ev, c), markers=True) for c in names}
    return [lines[c] for c in with_train], [lines[c] for c in names if c not in with_train]


def _eval_charts(report: Report, axis: Axis) -> str:
    """A chart per eval series not drawn with the training loss, on the shared step axis; more than
    ``FULL_WIDTH_EVALS`` are laid out two to a row (half width) so that many metrics stay compact."""
    rest = _eval_series(report)[1]
    shades = _shades(report, charts=True)
    if len(rest) <= FULL_WIDTH_EVALS:
        return "\n".join(chart_svg(Chart(f"eval: {ln.label}", [ln], shades, unit=ln.label), axis) for ln in rest)
    half = Axis(axis.lo, axis.hi, HALF_WIDTH)
    svgs = "\n".join(
        chart_svg(Chart(f"eval: {ln.label}", [ln], shades, HALF_HEIGHT, unit=ln.label), half) for ln in rest
    )
    return f'<div class="panels evals">\n{svgs}\n</div>'


def _loss_chart(report: Report) -> Chart:
    """The training loss with the eval losses drawn beside it."""
    t = report.run.table
    loss = _col(t, LOSS)
    pos = loss[np.isfinite(loss) & (loss > 0)]
    log = bool(pos.size == loss[np.isfinite(loss)].size and pos.size and pos.max() / pos.min() > 100)
    return Chart(
        "loss (train) and eval loss",
        [Line("train loss", t[STEP].to_numpy(), loss), *_eval_series(report)[0]],
        _shades(report, charts=True),
        log=log,
        unit="loss" + (" (log scale)" if log else ""),
    )


def _charts(report: Report) -> list[Chart]:
    """The charts below the eval metrics: lr, grad norm, time per step (those the log has)."""
    t, shades = report.run.table, _shades(report, charts=True)
    steps = t[STEP].to_numpy()
    charts = []
    for col, title, unit in ((LR, "learning rate", "lr"), (GRAD_NORM, "grad norm", "grad norm (L2)")):
        if report.run.has(col):
            charts.append(Chart(title, [Line(col, steps, _col(t, col))], shades, unit=unit))
    st = step_times(report.run)
    if st is not None:
        unit = time_unit(st)
        charts.append(
            Chart(f"time per step: {unit}", [Line(st.source, st.steps, st.seconds)], shades, unit=unit.split(" (")[0])
        )
    return charts


def _walk_charts(report: Report) -> list[Chart]:
    """A probe's curves (no model ran, no loss): each step's mean sample length (a sorted sampler's
    sawtooth, a grouped one's megabatches) and its padding efficiency."""
    t, shades = report.run.table, _shades(report, charts=True)
    if not report.run.has(LEN_MEAN):
        return []
    steps = t[STEP].to_numpy()
    charts = [
        Chart("batch mean length", [Line("len_mean", steps, _col(t, LEN_MEAN))], shades, unit="tokens per sequence")
    ]
    if report.run.has(PAD_FRAC):
        charts.append(
            Chart(
                "padding efficiency (real / padded tokens)",
                [Line("1 - pad_frac", steps, 1.0 - _col(t, PAD_FRAC))],
                shades,
                unit="efficiency",
            )
        )
    return charts


def _batching_panels(report: Report) -> str:
    t = report.run.table
    if not report.run.has(LEN_MEAN):
        return ""
    epochs = _col(t, EPOCH) if report.run.has(EPOCH) else None
    panel = (
        ""
        if report.sampler is not None
        else scatter_svg(
            "loss vs batch mean length, coloured by epoch",
            _col(t, LEN_MEAN),
            _col(t, LOSS),
            "len_mean (tokens per sequence)",
            epochs=epochs,
        )
    )
    rec = report.artifacts.recurrence_by_epoch
    recur = ""
    if rec:
        cells = "".join(f"<tr><td>epoch {i + 1}</td><td>{r:.0%}</td></tr>" for i, r in enumerate(rec))
        recur = f"<table><tr><th>epoch</th><th>batches seen in an earlier epoch</th></tr>{cells}</table>"
    return f'<h2>Batching evidence</h2><div class="panels">{panel}<div>{recur}</div></div>'


def _findings_table(report: Report) -> str:
    rows = build_rows(report)
    if not rows.findings:
        return "<p>No findings.</p>"
    body = []
    for f in rows.findings:
        ev = f'<p class="ev"><b>Evidence:</b> {escape("; ".join(f.evidence))}</p>' if f.evidence else ""
        body.append(
            f'<tr><td class="sev-{f.severity}">{escape(f.severity)}</td><td>{escape(f.code)}<br>'
            f"{escape(f.rule)}</td><td>{escape(f.steps)}</td><td>{escape(f.message)}"
            f'<p class="ev"><b>What to do:</b> {escape(f.hint)}</p>{ev}</td></tr>'
        )
    return (
        "<table><tr><th>severity</th><th>code</th><th>steps</th><th>finding and evidence</th></tr>"
        + "".join(body)
        + "</table>"
    )


def _earlier_runs(report: Report) -> str:
    """The earlier runs appended to the same log: one line per run with problems, the rest summarised."""
    title = earlier_title(report)
    if not title:
        return ""
    items = "".join(f"<li>{escape(x)}</li>" for x in earlier_lines(report))
    return f"<h2>{escape(title)}</h2><ul>{items}</ul>"


def _body(report: Report) -> str:
    """The report's content: everything inside the page's ``<body>``."""
    glance = "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in facts(report))
    parts = [
        f"<h1>logdoctor: {escape(report.meta.path)}</h1>",
        _summary(report),
        *_curves(report),
        "<h2>Findings</h2>",
        _findings_table(report),
        _earlier_runs(report),
        f'<h2>Run at a glance</h2><table class="facts">{glance}</table>',
        _checks_list(report),
    ]
    return "\n".join(p for p in parts if p)


def _curves(report: Report) -> list[str]:
    """The timeline, the curves and the batching panels; none for a run without a training row (it
    died before its first logged step: there is no curve to draw)."""
    steps = report.run.table[STEP].to_numpy()
    if steps.size == 0:
        return []
    axis = Axis(float(steps.min()), float(steps.max()))
    shades = _shades(report)
    charts = (
        [chart_svg(c, axis) for c in _walk_charts(report)]
        if report.sampler is not None
        else [
            chart_svg(_loss_chart(report), axis),
            _eval_charts(report, axis),
            *(chart_svg(c, axis) for c in _charts(report)),
        ]
    )
    return [
        timeline_svg(shades, axis) if shades else "",
        "<h2>Curves (one step axis; finding ranges shaded)</h2>",
        *charts,
        _batching_panels(report),
    ]


def _checks_list(report: Report) -> str:
    """Each check by name, ran or why not (the glance table says how many)."""
    if not report.checks:
        return ""
    rows = "".join(
        f"<tr><td>{escape(c.name)}</td><td>{'ran' if c.ran else 'not run: ' + escape(c.skipped)}</td></tr>"
        for c in report.checks
    )
    return f'<h2>Checks made</h2><table class="facts">{rows}</table>'


def page(title: str, body: str) -> str:
    """A whole self-contained page: ``body`` with the report's inline CSS."""
    return (
        "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en"><head><meta charset="utf-8">',
                f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
                body,
                "</body></html>",
            ]
        )
        + "\n"
    )


#: The class of the element a fragment's content and CSS are scoped to.
SCOPE = "logdoctor-report"


def fragment(body: str) -> str:
    """``body`` as one element to place inside another page (a notebook's output): its CSS scoped to
    that element, so that it styles nothing of the page around it."""
    return f'<div class="{SCOPE}"><style>{scoped_css(CSS, f".{SCOPE}")}</style>\n{body}\n</div>\n'


def scoped_css(css: str, scope: str) -> str:
    """Every rule of ``css`` (plain rules, no at-rules) applied only inside ``scope``; ``body`` is it."""
    out = []
    for rule in css.split("}"):
        selectors, _, declarations = rule.partition("{")
        if not declarations.strip():
            continue
        scoped = [scope if s.strip() == "body" else f"{scope} {s.strip()}" for s in selectors.split(",")]
        out.append(f"{','.join(scoped)}{{{' '.join(declarations.split())}}}")
    return "\n".join(out)


def render_html(report: Report) -> str:
    """The whole page for one run."""
    return page(f"logdoctor: {report.meta.path}", _body(report))


def render_fragment(report: Report) -> str:
    """The report of one run as one element of another page (``fragment``): what a notebook shows."""
    return fragment(_body(report))


class HtmlRenderer(Renderer):
    """``--format html``: one self-contained page per run (several runs: one page, one section each)."""

    name = "html"
    extension = ".html"

    def render(self, report: Report) -> str:
        return render_html(report)

    def render_many(self, reports: Sequence[Report]) -> str:
        if len(reports) == 1:
            return self.render(reports[0])
        pages = [render_html(r) for r in reports]
        bodies = [p.split("<body>", 1)[1].rsplit("</body>", 1)[0] for p in pages]
        head = pages[0].split("<body>", 1)[0] if pages else "<!DOCTYPE html><html><head></head>"
        return head + "<body>" + "<hr>".join(bodies) + "</body></html>\n"
