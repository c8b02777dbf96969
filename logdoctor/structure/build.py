"""Resolve run structure (duplicates, resumes, interleaving, epochs) from a ParseResult into a Run.

Rules 1-3 (exact duplicates, backward steps, the later write wins) are in ``resolve.py``; then:

4. NaN/inf losses are kept and counted in a note.
5. Steps per epoch: ``--steps-per-epoch`` wins, then the parser's value, then an integer epoch
   column (median steps between epoch changes), then a fractional epoch (1 / slope on step).
6. Cumulative counters become per-step values and constant/zero columns are noted (see counters).
"""

from __future__ import annotations

import dataclasses
from typing import cast

import numpy as np
import polars as pl

from logdoctor.ingest.parsers.base import ParseResult, require_rows
from logdoctor.model import (
    EPOCH,
    LINE_NO,
    LOSS,
    Run,
    RunMeta,
    RunStructure,
    validate_run,
)
from logdoctor.structure.appended import backward_steps, earlier_segments, last_run_evals, last_run_rows
from logdoctor.structure.counters import decumulate, degenerate_columns, is_failure_counter
from logdoctor.structure.ending import Plan, judge, place_events, with_ending
from logdoctor.structure.epochcut import unfinished_epoch
from logdoctor.structure.epochs import infer_steps_per_epoch, passed_budget, plan
from logdoctor.structure.evals import place_evals
from logdoctor.structure.layout import describe
from logdoctor.structure.resolve import resolve
from logdoctor.structure.restarts import flag_clock_resets, flag_epoch_falls, restarts_of
from logdoctor.structure.runmean import deaverage
from logdoctor.structure.steps import GIVEN_NOTE, Placed, place


def _column_notes(table: pl.DataFrame, notes: list[str]) -> pl.DataFrame:
    table = decumulate(table, notes)
    for col, value in degenerate_columns(table):
        if is_failure_counter(col) and value == 0:
            notes.append(f"{col}: 0 in every record (no failure counted: good news)")
            continue
        notes.append(f"{col}: constant {value:g} in every record (kept, but carries no information)")
    if LOSS in table.columns:
        bad = int(table.select((~pl.col(LOSS).is_finite()).sum()).item() or 0)
        if bad:
            notes.append(f"{bad} step(s) have a NaN or infinite loss (kept as data)")
    return table


def _epoch_plan(result: ParseResult, table: pl.DataFrame) -> tuple[int | None, str | None, float | None, bool]:
    """(planned epochs, where stated, the last epoch reached, whether the epoch counter is fractional
    progress) from the markers and the epoch columns."""
    m = result.markers
    planned, source = m.epochs_planned, m.epochs_planned_source
    total = f"{EPOCH}_total"
    if total in table.columns and table[total].drop_nulls().len():
        planned, source = int(table[total].max()), "column"  # type: ignore[arg-type]
    last: float | None = None
    progress = False
    if EPOCH in table.columns and table[EPOCH].drop_nulls().len():
        epoch = table[EPOCH].cast(pl.Float64).drop_nulls()
        last, progress = float(epoch.max()), bool((epoch != epoch.round(0)).any())  # type: ignore[arg-type]
    elif m.epoch_values:
        last = float(max(m.epoch_values))
    return planned, source, last, progress


def _ending(
    st: RunStructure,
    result: ParseResult,
    resume_lines: tuple[int, ...],
    fresh_lines: tuple[int, ...],
    evals: pl.DataFrame,
    live: bool,
) -> RunStructure:
    """``st`` with the run's failure events placed and its ending judged (structure/ending.py):
    the events of the last run only (those from its first row on; earlier runs have theirs)."""
    start = max(fresh_lines) if fresh_lines else 0
    rows = result.table.filter(pl.col(LINE_NO) >= start) if LINE_NO in result.table.columns else result.table
    lines = rows[LINE_NO].to_numpy() if LINE_NO in rows.columns else np.empty(0, dtype=np.int64)
    m = result.markers
    restarts = (*resume_lines, *m.resume_lines, *m.run_headers)
    placed = place_events(tuple(e for e in result.events if e.line >= start), rows, restarts)
    epochs, source, last_epoch, progress = _epoch_plan(result, rows)
    how = Plan(st.planned, st.planned_source, st.finished, epochs, source, last_epoch, progress, unfinished_epoch(rows))
    last_line = int(lines.max()) if lines.size else None
    ending = judge(placed, how, last_line, m.patience, evals, live=live, snapshot=result.snapshot)
    return with_ending(st, placed, how, ending)


#: How the whole log placed its rows: (the result with its rows placed, the placement).
Placement = tuple[ParseResult, Placed]


def _place_rows(result: ParseResult, whole: Placement | None, stride: int | None = None) -> Placed:
    """``steps.place`` on the rows; an appended run (``whole`` given) whose own rows place worse
    than the whole log placed them (more backward steps: one epoch change is too few to see a
    per-epoch counter) keeps the log's placement."""
    per_update = result.markers.grad_accum if result.steps_in_batches else None
    own = place(result.table, result.markers, result.step_from_order, result.total_steps, per_update, stride)
    if whole is not None and backward_steps(whole[0].table) < backward_steps(own.table):
        return whole[1]._replace(table=whole[0].table, notes=())
    return own


def _earlier_runs(
    raw: ParseResult,
    placement: Placement,
    starts: tuple[int, ...],
    name: str,
    fmt: str,
    spe: int | None,
    stride: int | None = None,
) -> tuple[Run, ...]:
    """Each fresh run appended before the last (cut at ``starts``), built on its own from its own
    records, keeping the whole log's placement when its own places worse (``_place_rows``)."""
    if not starts:
        return ()
    placed, how = placement
    own = earlier_segments(raw, starts)
    as_placed = earlier_segments(placed, starts)
    return tuple(build_run(seg, name, fmt, spe, (cut, how), stride) for seg, cut in zip(own, as_placed, strict=True))


def _steps_per_epoch(
    table: pl.DataFrame, given: int | None, stated: int | None, how: Placed, notes: list[str]
) -> tuple[int | None, str | None]:
    """Steps per epoch and where they came from: the user's ``--steps-per-epoch``, the log's
    statement, a per-epoch step counter's length (its note is the placement's), the epoch changes."""
    if given:
        return given, "given"
    if stated:
        return stated, "stated"
    if how.length is not None and how.epoch_source == "two_level":
        return how.length.steps, how.length.source
    spe = infer_steps_per_epoch(table)
    if spe:
        notes.append(f"steps per epoch {spe} inferred from the epoch column")
    return spe, "epoch_changes" if spe else None


def build_run(
    result: ParseResult,
    name: str,
    fmt: str,
    steps_per_epoch: int | None = None,
    whole: Placement | None = None,
    stride: int | None = None,
    earlier_runs: bool = True,
    live: bool = False,
) -> Run:
    """Turn a parser's raw rows into a Run: rows placed from marker lines (steps.py), duplicates
    dropped, resumes resolved (the later write of a step wins), backward steps reported, steps
    sorted, steps per epoch recorded (rules above), the structure described (layout.py).
    ``stride`` (``--stride``): optimizer steps per row when the rows carry no step (steps.py rule 3).
    The Run is the log's last run; each fresh run appended before it is built on its own into
    ``Run.earlier`` (appended.py), with ``whole`` (how the whole log placed its rows) given;
    ``earlier_runs=False`` leaves them out (tail follows the current run only); ``live``: the log
    is being followed, so a run that has not failed is still running (structure/ending.py).

    Raises:
        ParseError: no training step survives, or the table breaks the Run schema.
    """
    raw = require_rows(result)  # a run that died before its first row has no rows to build
    notes = list(result.notes)
    how = _place_rows(result, whole, stride)
    epoch_source = how.epoch_source
    stride_given = bool(stride) and any(n.startswith(GIVEN_NOTE) for n in how.notes)
    notes += how.notes
    placed = how.table
    clock = flag_clock_resets(placed)
    if clock[1]:
        placed = clock[0]
    fell = flag_epoch_falls(placed)
    if fell[1]:
        placed = fell[0]
    if placed is not result.table:
        result = dataclasses.replace(result, table=placed)
    placement: Placement = (result, how)
    table, counts = resolve(result)
    resume_lines, earlier_rows = cast("tuple[tuple[int, ...], int]", counts.pop("resume_lines"))
    fresh_lines = cast("tuple[int, ...]", counts.pop("fresh_lines"))
    if counts["nonmonotonic_steps"]:
        notes.append(
            f"{counts['nonmonotonic_steps']} record(s) whose step did not advance (went back or repeated "
            "with other values) look like interleaved writers, "
            "not resumes: steps were sorted and repeated steps keep their last write"
        )
    if result.lossless_steps:
        shown = ", ".join(str(x) for x in result.lossless_steps[:5])
        notes.append(
            f"{len(result.lossless_steps)} step record(s) without a loss (step {shown}) are "
            "counted in the structure's rows, not analysed"
        )
    if earlier_rows:
        notes.append(
            f"{earlier_rows} row(s) of earlier run(s) appended to this log are counted in the "
            f"structure's rows; the report is the last run's ({table.height} rows), and each "
            "earlier run is analysed on its own (Earlier runs)"
        )
    table = _column_notes(table, notes)
    table, running = deaverage(table, notes)
    spe, spe_source = _steps_per_epoch(table, steps_per_epoch, result.steps_per_epoch, how, notes)
    planned, planned_source, spe, epoch_source, spe_source = plan(result, spe, epoch_source, spe_source, notes)
    if passed_budget(planned, planned_source, table, notes) is None:
        planned, planned_source = None, None
    restarts = restarts_of(result, resume_lines, clock[1], fell[1])
    if restarts and len(restarts) != len(counts["resume_steps"]):  # type: ignore[arg-type]
        counts["resume_steps"] = tuple(r.step for r in restarts)
        counts["resumes"] = len(restarts)
    evals = last_run_evals(result.evals, fresh_lines)  # an earlier run's evaluations are its own
    structure = describe(
        table,
        evals,
        planned=planned,
        planned_source=planned_source,
        spe=spe,
        epoch_source="given" if steps_per_epoch else epoch_source,
        spe_source=spe_source,
        restarts=restarts,
        duplicates=int(counts["duplicate_steps"]),  # type: ignore[call-overload]
        grad_accum=result.markers.grad_accum,
        earlier_rows=int(earlier_rows),
        numbered=how.numbered,
        all_rows=result.table.sort(LINE_NO) if LINE_NO in result.table.columns else None,
        lossless=result.lossless_steps,
        stride_given=stride if stride_given else None,
    )
    structure = _ending(structure, result, resume_lines, fresh_lines, evals, live)
    if running is not None:
        structure = dataclasses.replace(structure, running_mean=running.columns, running_mean_slopes=running.slopes)
    meta = RunMeta(
        path=name,
        format=fmt,
        lines_read=result.lines_read,
        records_read=result.records_read,
        lines_skipped=result.lines_skipped,
        # most frequent first, then by name: one order whatever the hash seed
        skip_reasons=dict(sorted(result.skip_reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
        total_steps=result.total_steps,
        steps_per_epoch=spe,
        steps_per_epoch_given=steps_per_epoch is not None,
        aliases=dict(result.aliases),
        notes=tuple(notes),
        structure=structure,
        **counts,  # type: ignore[arg-type]
    )
    checked = validate_run(table)
    earlier = (
        _earlier_runs(raw, placement, fresh_lines, name, fmt, steps_per_epoch, stride)
        if whole is None and earlier_runs
        else ()
    )
    lossless = last_run_rows(result.lossless_rows, result.table, fresh_lines)
    return Run(table=checked, meta=meta, evals=place_evals(evals, checked), earlier=earlier, lossless=lossless)
