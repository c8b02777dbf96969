"""Cut a log holding several appended fresh runs into one ParseResult per earlier run.

build.py finds where a fresh run starts (rule 2: the step goes back to where the log began); the
records from one such start up to the next belong to one run, which is then built on its own and
never joined to another run's rows. A resume from a checkpoint (the counter goes back, but not to
where the log began) stays inside its run. The lines before the first start belong to the first
run (its headers); an evaluation belongs to the run whose rows it follows.
"""

from __future__ import annotations

import dataclasses
import itertools

import polars as pl

from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.ingest.parsers.markers import Markers
from logdoctor.ingest.sidecars import SOURCES
from logdoctor.model import LINE_NO, STEP


def _lines_in(lines: tuple[int, ...], lo: int, hi: int) -> tuple[int, ...]:
    return tuple(x for x in lines if lo <= x < hi)


def _plans_until(m: Markers, lo: int, hi: int, until: int) -> dict[str, int | None]:
    """Each stated plan field of the launch written on ``[lo, hi)`` whose last training row is on line
    ``until``: the last statement before that row (a launch prints its config before it trains; a
    later launch's config, even one written before this segment ends, is not this launch's plan),
    else the first one in the segment, else none (a statement only after the segment is a later launch's)."""
    out: dict[str, int | None] = {}
    for field in dict.fromkeys(f for f, _, _ in m.plans):
        said = [(line, v) for f, line, v in m.plans if f == field]
        before = [v for line, v in said if line <= until]
        inside = [v for line, v in said if lo <= line < hi]
        out[field] = before[-1] if before else (inside[0] if inside else None)
    return out


def _markers_in(m: Markers, lo: int, hi: int, until: int | None = None) -> Markers:
    """The marker lines of ``[lo, hi)`` and the plan its launch stated (``_plans_until``, ``until``:
    the line of its last training row); facts without a line (accumulation) stay."""
    if m.plans:
        said = _plans_until(m, lo, hi, hi if until is None else until)
        m = dataclasses.replace(
            m,
            planned_steps=said.get("planned_steps", m.planned_steps),
            config_planned=said.get("config_planned", m.config_planned),
        )
        if "epochs_planned" in said:
            epochs = said["epochs_planned"]
            m = dataclasses.replace(m, epochs_planned=epochs, epochs_planned_source="config" if epochs else None)
    pairs = [(x, v) for x, v in zip(m.epoch_lines, m.epoch_values, strict=False) if lo <= x < hi]
    return dataclasses.replace(
        m,
        epoch_lines=tuple(x for x, _ in pairs),
        epoch_values=tuple(v for _, v in pairs),
        epoch_source=m.epoch_source if pairs else None,
        resume_lines=_lines_in(m.resume_lines, lo, hi),
        run_headers=_lines_in(m.run_headers, lo, hi),
    )


def _rows_in(table: pl.DataFrame, lo: int, hi: int) -> pl.DataFrame:
    if table.height == 0 or LINE_NO not in table.columns:
        return table
    line = pl.col(LINE_NO)
    return table.filter((line >= lo) & (line < hi))


def segment(result: ParseResult, lo: int, hi: int) -> ParseResult:
    """The part of ``result`` written on lines ``[lo, hi)``: rows, evaluations, markers and the plan
    its launch stated (a total read from the log's plan statement, not from its rows, is this
    launch's own)."""
    table = _rows_in(result.table, lo, hi)
    last = table[LINE_NO].max() if table.height and LINE_NO in table.columns else None
    markers = _markers_in(result.markers, lo, hi, None if last is None else int(last))  # type: ignore[arg-type]
    total = result.total_steps
    if result.planned_source == "header" and any(f == "planned_steps" for f, _, _ in result.markers.plans):
        total = markers.planned_steps
    if result.planned_source in SOURCES:
        total = None  # a file beside the log is rewritten at each launch: it states the last one's plan
    if markers.epochs_planned_source in SOURCES:
        markers = dataclasses.replace(markers, epochs_planned=None, epochs_planned_source=None)
    return dataclasses.replace(
        result,
        table=table,
        evals=_rows_in(result.evals, lo, hi),
        markers=markers,
        total_steps=total,
        planned_source=result.planned_source if total is not None else None,
        lossless_steps=(),
        lossless_rows=_rows_in(result.lossless_rows, lo, hi),
        events=tuple(e for e in result.events if lo <= e.line < hi),
        notes=(),
    )


def earlier_segments(result: ParseResult, starts: tuple[int, ...]) -> list[ParseResult]:
    """One ParseResult per run appended before the last (file order), cut at ``starts``: the
    line of the first row of each fresh run after the first."""
    bounds = [0, *sorted(starts)]
    return [segment(result, lo, hi) for lo, hi in itertools.pairwise(bounds)]


def last_run_evals(evals: pl.DataFrame, starts: tuple[int, ...]) -> pl.DataFrame:
    """The evaluations of the last run: those written from its first row on."""
    return _rows_in(evals, max(starts), 2**62) if starts else evals


def last_run_rows(rows: pl.DataFrame, table: pl.DataFrame, starts: tuple[int, ...]) -> pl.DataFrame:
    """Records without a loss that belong to the last run: those written after the earlier runs'
    last training row (an all-skipped first iteration comes before the run's first loss row)."""
    if not starts or rows.height == 0 or LINE_NO not in table.columns:
        return rows
    before = table.filter(pl.col(LINE_NO) < max(starts))[LINE_NO].max()
    return rows if before is None else _rows_in(rows, int(before) + 1, 2**62)  # type: ignore[arg-type]


def backward_steps(table: pl.DataFrame) -> int:
    """Rows (in file order) whose step is not above the step of the row before."""
    if table.height < 2 or STEP not in table.columns:
        return 0
    t = table.sort(LINE_NO, maintain_order=True) if LINE_NO in table.columns else table
    step = t[STEP].cast(pl.Float64)
    return int((step.diff() <= 0).sum())
