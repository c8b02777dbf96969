"""Resolve run structure (duplicates, resumes, interleaving, epochs) from a ParseResult into a Run.

Rules, applied to the records in file order (``line_no``):

1. **Exact duplicates.** A record identical to the record just before it (same step and the same
   training values; timing and throughput columns may differ) is a repeated write (ms-swift writes
   every record twice). It is dropped and counted in ``duplicate_steps``; it is not a resume.
2. **Backward steps.** A record whose step is not above the previous record's step starts a new
   monotonic segment. The jump is a **resume** when the segment it starts is long (at least
   ``MIN_RESUME_RUN`` records, or it runs to the end of the log) and such long jumps are rare
   (at most ``max(MAX_RESUMES, 1% of records)``). Otherwise the log interleaves writers (ranks,
   files): every such jump is counted in ``nonmonotonic_steps``; none is called a resume.
   Short jumps (fewer than ``MIN_RESUME_RUN`` records follow) beside rarer long ones are counted as
   non-monotonic too; when short jumps outnumber long ones, the whole log counts as interleaved.
   A long jump whose segment covers no step written before it (a late block filling a gap, as
   when files are concatenated out of order) is non-monotonic too: a resume rewrites steps.
   A step that goes back to where the log began (or below) after the log progressed is a
   fresh run appended to the file: a restart however short that run is, unless the log is
   interleaved (then it is one more backward jump).
   A parser may also flag the first record after a restart marker ("Training started") with a
   ``restart`` column: that record starts a resume even when its step does not go back (a flag on
   the very first record is the initial start, not a resume).
3. **The later write wins.** A resume at step ``r`` discards every earlier record with step >= ``r``
   (the final trajectory retrained those steps); they are counted in ``overwritten_steps``. A
   fresh run appended to the file (rule 2) discards every earlier record. Steps
   repeated by interleaving keep their last write. The table is then sorted by step.
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

from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.model import (
    LINE_NO,
    LOSS,
    OPTIONAL_COLUMNS,
    STEP,
    THROUGHPUT,
    Run,
    RunMeta,
    validate_run,
)
from logdoctor.structure.appended import backward_steps, earlier_segments, last_run_evals
from logdoctor.structure.counters import decumulate, degenerate_columns, is_failure_counter
from logdoctor.structure.epochs import infer_steps_per_epoch, plan
from logdoctor.structure.evals import place_evals
from logdoctor.structure.layout import describe
from logdoctor.structure.restarts import RESTART, flag_clock_resets, restarts_of
from logdoctor.structure.runmean import deaverage
from logdoctor.structure.steps import GIVEN_NOTE, place

MIN_RESUME_RUN = 3
MAX_RESUMES = 10
#: Columns compared to call two adjacent records identical (throughput and timings may differ).
SIGNATURE = tuple(c for c in (STEP, LOSS, *OPTIONAL_COLUMNS) if c != THROUGHPUT)


def _drop_duplicates(t: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Drop records identical to the record just before them; return (table, count dropped)."""
    if t.height < 2:
        return t, 0
    sig = pl.struct([c for c in SIGNATURE if c in t.columns]).hash()
    dup = (sig == sig.shift(1)) & (pl.col(STEP) == pl.col(STEP).shift(1))
    mask = t.select(dup.fill_null(False)).to_series()
    return t.filter(~mask), int(mask.sum())


def _rewrites_earlier_steps(step: np.ndarray, seg: np.ndarray, at: np.ndarray) -> np.ndarray:
    """For each jump position, whether its segment's step range covers steps written before it.

    A restart from a checkpoint writes steps again; a block of steps that arrives late and fills a
    gap (out-of-order files) covers none, so it is not a resume.
    """
    out = np.zeros(at.size, dtype=bool)
    for k, i in enumerate(at):  # only the few long jumps
        seg_steps = step[seg == seg[i]]
        earlier = step[:i]
        out[k] = bool(((earlier >= seg_steps.min()) & (earlier <= seg_steps.max())).any())
    return out


def _fresh_starts(t: pl.DataFrame) -> np.ndarray:
    """Records where the step goes back to where the log began (or below) after progress, or
    below the step before while there, right after a step up: a fresh run appended to the same
    file, however short it is, even after an earlier run that never passed the log's first step
    (never an interleaved writer, whose steps repeat, nor a log written newest first)."""
    step = t[STEP].to_numpy()
    if step.size < 2:
        return np.zeros(step.size, dtype=bool)
    prev = np.concatenate(([step[0]], step[:-1]))
    rose = np.concatenate(([False], prev[1:] > prev[:-1]))  # the row before was a step up
    fresh = (step <= step[0]) & ((prev > step[0]) | ((step < prev) & rose))
    fresh[0] = False
    return fresh


def _classify_jumps(t: pl.DataFrame, restart: pl.Series) -> tuple[pl.Series, int]:
    """(is_resume per record, count of non-resume backward jumps)."""
    back = t.select((pl.col(STEP) <= pl.col(STEP).shift(1)).fill_null(False)).to_series()
    fresh = _fresh_starts(t)  # appended runs: always restarts, never interleaving
    seg = back.cast(pl.Int64).cum_sum()
    seg_len = seg.to_frame("s").select(pl.len().over("s")).to_series()
    last_seg = seg == seg.max()
    long_after = (back & ((seg_len >= MIN_RESUME_RUN) | last_seg)).to_numpy() & ~fresh
    n_back = int(back.sum()) - int(fresh.sum())
    n_long = int(long_after.sum())
    if n_back - n_long > n_long or n_long > max(MAX_RESUMES, t.height // 100):
        # interleaved writers: no jump is a resume, not even one back to the first step (a
        # writer flushing its first chunk after another's is no fresh run)
        return restart, n_back + int(fresh.sum())
    at = np.flatnonzero(long_after)
    keep = _rewrites_earlier_steps(t[STEP].to_numpy(), seg.to_numpy(), at)
    resume = fresh.copy()
    resume[at[keep]] = True
    return pl.Series(resume) | restart, n_back - int(keep.sum())


def _apply_resumes(
    t: pl.DataFrame, is_resume: pl.Series
) -> tuple[pl.DataFrame, tuple[int, ...], int, tuple[tuple[int, ...], int]]:
    """Discard records that a later resume retrained; return (table, resume steps, overwritten,
    (line of each resume record, rows of earlier runs appended before the last fresh run))."""
    inf = np.iinfo(np.int64).max
    fresh = pl.Series(_fresh_starts(t)) & is_resume
    t = t.with_columns(is_resume.alias("_resume"))
    # a fresh run appended to the file discards every earlier record, whatever its step
    first = pl.when(fresh).then(np.iinfo(np.int64).min).otherwise(pl.col(STEP))
    rs = pl.when(pl.col("_resume")).then(first).otherwise(inf)
    later_min = rs.reverse().cum_min().reverse().shift(-1).fill_null(inf)
    keep = t.select(pl.col(STEP) < later_min).to_series()
    last_fresh = np.flatnonzero(fresh.to_numpy())
    t = t.with_columns(pl.lit(int(last_fresh[-1]) if last_fresh.size else 0).alias("_earlier"))
    resumed = t.filter(pl.col("_resume"))
    steps = tuple(int(s) for s in resumed[STEP])
    lines = tuple(int(x) for x in resumed[LINE_NO]) if LINE_NO in t.columns else ()
    earlier = int(t["_earlier"][0]) if t.height else 0
    return t.filter(keep).drop("_resume", "_earlier"), steps, int((~keep).sum()) - earlier, (lines, earlier)


def _fresh_lines(t: pl.DataFrame, is_resume: pl.Series) -> tuple[int, ...]:
    """Lines of the first row of each fresh run appended to the log (rule 2), file order."""
    if LINE_NO not in t.columns:
        return ()
    fresh = pl.Series(_fresh_starts(t)) & is_resume
    return tuple(int(x) for x in t[LINE_NO].filter(fresh))


def _in_order(t: pl.DataFrame) -> bool:
    """Whether records are in file order with strictly increasing steps and no restart flag past
    the first record: then rules 1-3 change nothing (no duplicate, no backward jump, no resume)."""
    if RESTART in t.columns:
        flags = t[RESTART].cast(pl.Float64).fill_null(0).fill_nan(0).to_numpy()
        if np.any(flags[1:] != 0):
            return False
    if t[STEP].null_count() or (LINE_NO in t.columns and t[LINE_NO].null_count()):
        return False
    step = t[STEP].to_numpy()
    if not np.all(step[1:] > step[:-1]):
        return False
    line = t[LINE_NO].to_numpy() if LINE_NO in t.columns else step
    return bool(np.all(line[1:] >= line[:-1]))


def _resolve(result: ParseResult) -> tuple[pl.DataFrame, dict[str, object]]:
    """Apply rules 1-3: the final trajectory's records sorted by step, and the counts."""
    if _in_order(result.table):  # the common case: one writer, one pass, no resume
        counts: dict[str, object] = dict.fromkeys(
            ("duplicate_steps", "nonmonotonic_steps", "resumes", "overwritten_steps"), 0
        )
        counts["resume_steps"] = ()
        counts["resume_lines"] = ((), 0)
        counts["fresh_lines"] = ()
        return result.table.drop(RESTART, strict=False), counts
    t = result.table.sort(LINE_NO, maintain_order=True)
    restart = pl.Series([False] * t.height)
    if RESTART in t.columns:
        restart = t[RESTART].cast(pl.Float64).fill_null(0).fill_nan(0) != 0
        # the marker before the first step is the initial start, not a resume
        restart = restart.scatter(0, False) if t.height else restart
        t = t.drop(RESTART)
    t, dups = _drop_duplicates(t.with_columns(restart.alias(RESTART)))
    restart = t[RESTART]
    t = t.drop(RESTART)
    is_resume, nonmono = _classify_jumps(t, restart)
    fresh_lines = _fresh_lines(t, is_resume)
    t, resume_steps, overwritten, resume_lines = _apply_resumes(t, is_resume)
    deduped = t.unique(subset=[STEP], keep="last", maintain_order=True).sort(STEP)
    overwritten += t.height - deduped.height
    counts = {
        "duplicate_steps": dups,
        "nonmonotonic_steps": nonmono,
        "resumes": len(resume_steps),
        "resume_steps": resume_steps,
        "overwritten_steps": overwritten,
        "resume_lines": resume_lines,
        "fresh_lines": fresh_lines,
    }
    return deduped, counts


def _column_notes(table: pl.DataFrame, notes: list[str]) -> pl.DataFrame:
    table = decumulate(table, notes)
    for col, value in degenerate_columns(table):
        if is_failure_counter(col) and value == 0:
            notes.append(f"{col}: 0 in every record (no failure counted: good news)")
            continue
        notes.append(
            f"{col}: constant {value:g} in every record (kept, but carries no information)"
        )
    if LOSS in table.columns:
        bad = int(table.select((~pl.col(LOSS).is_finite()).sum()).item() or 0)
        if bad:
            notes.append(f"{bad} step(s) have a NaN or infinite loss (kept as data)")
    return table


#: How the whole log placed its rows: (the placed rows, epoch source, whether steps are row numbers).
Placement = tuple[ParseResult, str | None, bool]


def _place_rows(
    result: ParseResult, whole: Placement | None, stride: int | None = None
) -> tuple[pl.DataFrame, str | None, tuple[str, ...], bool]:
    """``steps.place`` on the rows; an appended run (``whole`` given) whose own rows place worse
    than the whole log placed them (more backward steps: one epoch change is too few to see a
    per-epoch counter) keeps the log's placement."""
    per_update = result.markers.grad_accum if result.steps_in_batches else None
    own = place(result.table, result.markers, result.step_from_order, result.total_steps, per_update, stride)
    if whole is not None and backward_steps(whole[0].table) < backward_steps(own[0]):
        return whole[0].table, whole[1], (), whole[2]
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
    placed, epoch_source, numbered = placement
    own = earlier_segments(raw, starts)
    as_placed = earlier_segments(placed, starts)
    return tuple(
        build_run(seg, name, fmt, spe, (cut, epoch_source, numbered), stride)
        for seg, cut in zip(own, as_placed, strict=True)
    )


def build_run(
    result: ParseResult,
    name: str,
    fmt: str,
    steps_per_epoch: int | None = None,
    whole: Placement | None = None,
    stride: int | None = None,
    earlier_runs: bool = True,
) -> Run:
    """Turn a parser's raw rows into a Run: rows placed from marker lines (steps.py), duplicates
    dropped, resumes resolved (the later write of a step wins), backward steps reported, steps
    sorted, steps per epoch recorded (rules above), the structure described (layout.py).
    ``stride`` (``--stride``): optimizer steps per row when the rows carry no step (steps.py rule 3).
    The Run is the log's last run; each fresh run appended before it is built on its own into
    ``Run.earlier`` (appended.py), with ``whole`` (how the whole log placed its rows) given;
    ``earlier_runs=False`` leaves them out (tail follows the current run only).

    Raises:
        ParseError: no training step survives, or the table breaks the Run schema.
    """
    raw = result
    notes = list(result.notes)
    placed, epoch_source, placed_notes, numbered = _place_rows(result, whole, stride)
    stride_given = bool(stride) and any(n.startswith(GIVEN_NOTE) for n in placed_notes)
    notes += placed_notes
    clock = flag_clock_resets(placed)
    if clock[1]:
        placed = clock[0]
    if placed is not result.table:
        result = dataclasses.replace(result, table=placed)
    placement: Placement = (result, epoch_source, numbered)
    table, counts = _resolve(result)
    resume_lines, earlier_rows = cast("tuple[tuple[int, ...], int]", counts.pop("resume_lines"))
    fresh_lines = cast("tuple[int, ...]", counts.pop("fresh_lines"))
    if counts["nonmonotonic_steps"]:
        notes.append(
            f"{counts['nonmonotonic_steps']} backward step jump(s) look like interleaved writers, "
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
    spe = steps_per_epoch or result.steps_per_epoch
    if spe is None:
        spe = infer_steps_per_epoch(table)
        if spe:
            notes.append(f"steps per epoch {spe} inferred from the epoch column")
    planned, planned_source, spe, epoch_source = plan(result, spe, epoch_source, notes)
    restarts = restarts_of(result, resume_lines, clock[1])
    if restarts and len(restarts) != len(counts["resume_steps"]):  # type: ignore[arg-type]
        counts["resume_steps"] = tuple(r.step for r in restarts)
        counts["resumes"] = len(restarts)
    structure = describe(
        table,
        result.evals,
        planned=planned,
        planned_source=planned_source,
        spe=spe,
        epoch_source="given" if steps_per_epoch else epoch_source,
        restarts=restarts,
        duplicates=int(counts["duplicate_steps"]),  # type: ignore[call-overload]
        grad_accum=result.markers.grad_accum,
        earlier_rows=int(earlier_rows),
        numbered=numbered,
        all_rows=result.table.sort(LINE_NO) if LINE_NO in result.table.columns else None,
        lossless=result.lossless_steps,
        stride_given=stride if stride_given else None,
    )
    if running is not None:
        structure = dataclasses.replace(
            structure, running_mean=running.columns, running_mean_slopes=running.slopes
        )
    meta = RunMeta(
        path=name,
        format=fmt,
        lines_read=result.lines_read,
        records_read=result.records_read,
        lines_skipped=result.lines_skipped,
        skip_reasons=dict(result.skip_reasons),
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
    evals = place_evals(last_run_evals(result.evals, fresh_lines), checked)
    return Run(table=checked, meta=meta, evals=evals, earlier=earlier)
